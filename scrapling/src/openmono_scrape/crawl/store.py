"""Where a job lives while it runs: its spec, its state, its frontier and its results.

Two stores keep the same rules: `RedisJobStore` (durable: the scrape service and every scrape
worker share it) and `MemoryJobStore` (the scrape service alone, when no Redis is configured).
The rules:

- A page is an `Item` (URL, discovery depth, dedupe key, attempts). The frontier holds the items
  not yet taken; `claim` leases at most `concurrency - leased` of them to a driver (one at a time,
  `delay_s` apart, when the job has a delay), first handing back the leases that ran out (their
  driver died), or giving up an item whose drivers died `max_attempts` times.
- `finish` records one page: a document, an error, or nothing (a robots.txt refusal, a redirect
  onto a page the crawl already has). The page's key goes into `done` first: a second finish of
  the same page (a lease that ran out while its driver was only slow) changes nothing, so no page
  is stored twice. Discovered items enter the frontier when their key is new and the job is under
  its `limit`. The finish that leaves nothing leased and nothing queued completes the job
  (`failed` when no page could be had and some failed), and says so to its caller, which then
  sends the `completed`/`failed` webhook: exactly one caller sees that.
- Documents are kept in completion order, bounded in bytes (`max_bytes`); past the bound the job
  stops taking pages and completes with a warning. Everything expires at `expires_at`.
- `drivers`: the driver chains working on a job, each with a heartbeat deadline; `beat` refuses a
  chain beyond `max_drivers`.
- Bytes per key and in all: the jobs of one key (the job's `owner`) hold at most the store's
  `key_bytes`, and all jobs together at most its `total_bytes`, so one key's crawls cannot take
  the room the other keys need. A job holds what it has stored, and at least `floor_bytes` (1 MiB,
  or its `max_bytes` if smaller) while it runs, until it expires. `create` raises `StoreFull` when
  the new job's floor does not fit its key's bound or the total; a document that would pass either
  stops the job as its own bound does, with a warning naming the bound.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from openmono_contracts.crawl import JobSpec, JobStatus

from openmono_scrape.errors import TooManyJobs

Verdict = Literal["stored", "error", "skipped", "duplicate", "dropped"]
CancelOutcome = Literal["cancelled", "completed", "failed", "missing"]
BYTE_BOUND_WARNING = "the job's results reached their byte bound: it stopped taking pages"
KEY_BOUND_WARNING = (
    "the jobs of this key reached the bytes one key may hold (SCRAPE_CRAWL_MAX_KEY_BYTES): "
    "the job stopped taking pages"
)
TOTAL_BOUND_WARNING = (
    "the jobs of all keys reached the bytes they may hold together "
    "(SCRAPE_CRAWL_MAX_TOTAL_BYTES): the job stopped taking pages"
)
# what a running job holds at least, so the bounds also bound how many jobs run at once
FLOOR_BYTES = 1024 * 1024


class StoreFull(TooManyJobs):
    """Making the job would pass the bytes all jobs may hold together, or those of its key."""

    def __init__(self, used: int, total: int, *, per_key: bool = False) -> None:
        whose, setting = (
            ("this key's running and recent jobs", "SCRAPE_CRAWL_MAX_KEY_BYTES")
            if per_key
            else ("running and recent jobs", "SCRAPE_CRAWL_MAX_TOTAL_BYTES")
        )
        super().__init__(
            f"the results of {whose} hold {used} of the {total} bytes allowed ({setting}); "
            "try again when one has ended or expired"
        )
        self.per_key = per_key


def floor_bytes(spec: JobSpec) -> int:
    return min(FLOOR_BYTES, spec.max_bytes)


def held_bytes(stored: int, running: bool, floor: int) -> int:
    """What a job holds of its key's and of the total bound."""
    return max(stored, floor) if running else stored


def over_bound(
    more: int, used: int, mine: int, total_bytes: int | None, key_bytes: int | None
) -> Literal["key", "total"] | None:
    """Which bound `more` bytes pass (`used`: what all jobs hold, `mine`: those of the key)."""
    if key_bytes is not None and mine + more > key_bytes:
        return "key"
    if total_bytes is not None and used + more > total_bytes:
        return "total"
    return None


@dataclass(frozen=True)
class Item:
    """One page of a job: its URL, discovery depth, dedupe key, and how often its driver died."""

    url: str
    depth: int
    key: str
    attempts: int = 0
    kickoff: bool = False  # a crawl's start page: read the site's robots.txt and sitemaps first

    def encode(self) -> str:
        raw = {"u": self.url, "d": self.depth, "k": self.key, "a": self.attempts}
        if self.kickoff:
            raw["s"] = 1
        return json.dumps(raw, separators=(",", ":"))

    @classmethod
    def decode(cls, text: str | bytes) -> Item:
        raw = json.loads(text)
        return cls(
            str(raw["u"]), int(raw["d"]), str(raw["k"]), int(raw.get("a", 0)), bool(raw.get("s"))
        )


@dataclass
class Finished:
    """What became of one page."""

    document: str | None = None  # Firecrawl document JSON
    error: dict[str, Any] | None = None  # {id, timestamp, url, code, error}
    alias_key: str | None = None  # the key of the URL a redirect ended on
    discovered: list[Item] = field(default_factory=list)
    blocked: list[tuple[str, str]] = field(default_factory=list)  # (key, url) robots refused
    self_blocked: bool = False  # robots.txt refused this page itself


@dataclass(frozen=True)
class FinishResult:
    verdict: Verdict
    # the status the job reached with this finish (completed/failed), else None
    ended: JobStatus | None = None


@dataclass(frozen=True)
class JobState:
    status: JobStatus
    total: int
    completed: int
    failed: int
    bytes: int
    finished_at: float | None
    warning: str | None


class JobStore(Protocol):
    """Both stores; every method is atomic with respect to the others."""

    durable: bool

    async def create(self, spec: JobSpec, items: list[Item]) -> None: ...
    async def spec(self, job_id: str) -> JobSpec | None: ...
    async def state(self, job_id: str) -> JobState | None: ...
    async def claim(self, job_id: str, n: int, now: float) -> list[Item]: ...
    async def renew(self, job_id: str, items: list[Item], now: float) -> None: ...
    async def release(self, job_id: str, item: Item) -> None: ...
    async def finish(self, job_id: str, item: Item, done: Finished, now: float) -> FinishResult: ...
    async def documents(self, job_id: str, skip: int, limit: int) -> list[str]: ...
    async def errors(self, job_id: str) -> tuple[list[str], list[str]]: ...
    async def cancel(self, job_id: str, now: float) -> CancelOutcome: ...
    async def robots(self, job_id: str, origin: str) -> str | None: ...
    async def set_robots(self, job_id: str, origin: str, text: str) -> None: ...
    async def mark_once(self, job_id: str, flag: str) -> bool: ...
    async def beat(self, job_id: str, token: str, until: float, now: float) -> bool: ...
    async def leave(self, job_id: str, token: str) -> None: ...
    async def live_drivers(self, job_id: str, now: float) -> int: ...
    async def owned(self, owner: str) -> list[str]:
        """The ids of `owner`'s jobs that have not expired (running or ended)."""
        ...

    async def close(self) -> None: ...


def abandoned_error(item: Item, now_iso: str, attempts: int) -> dict[str, Any]:
    """The error recorded for a page whose drivers died `attempts` times."""
    return {
        "id": item.key,
        "timestamp": now_iso,
        "url": item.url,
        "code": "WORKER_LOST",
        "error": f"the worker reading this page was lost {attempts} times; the page is given up",
    }
