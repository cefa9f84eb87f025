"""The job store of a scrape service without Redis: the same rules as `RedisJobStore`, in memory.

Not durable: a restart of the service loses its jobs (`/services` says so). Expired jobs are
dropped whenever a job is created or looked up. Every method runs without awaiting anything, so
each is atomic on the service's event loop, as a Lua script is in Redis.
"""

from __future__ import annotations

import json
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime

from openmono_contracts.crawl import JobSpec, JobStatus

from openmono_scrape.crawl.store import (
    BYTE_BOUND_WARNING,
    KEY_BOUND_WARNING,
    TOTAL_BOUND_WARNING,
    CancelOutcome,
    Finished,
    FinishResult,
    Item,
    JobState,
    StoreFull,
    Verdict,
    abandoned_error,
    floor_bytes,
    held_bytes,
    over_bound,
)


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class _Job:
    spec: JobSpec
    status: JobStatus = "scraping"
    total: int = 0
    completed: int = 0
    failed: int = 0
    bytes: int = 0
    finished_at: float | None = None
    warning: str | None = None
    stopped: bool = False
    not_before: float = 0.0
    frontier: deque[Item] = field(default_factory=deque)
    leases: dict[Item, float] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)
    done: set[str] = field(default_factory=set)
    docs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    robots_blocked: list[str] = field(default_factory=list)
    robots: dict[str, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    drivers: dict[str, float] = field(default_factory=dict)

    def end_if_drained(self, now: float) -> JobStatus | None:
        if self.status != "scraping" or self.frontier or self.leases:
            return None
        self.status = "failed" if self.completed == 0 and self.failed > 0 else "completed"
        self.finished_at = now
        return self.status


class MemoryJobStore:
    durable = False

    def __init__(self, total_bytes: int | None = None, key_bytes: int | None = None) -> None:
        self._jobs: dict[str, _Job] = {}
        self.total_bytes = total_bytes
        self.key_bytes = key_bytes

    def _sweep(self, now: float) -> None:
        for job_id in [j for j, job in self._jobs.items() if job.spec.expires_at <= now]:
            del self._jobs[job_id]

    def _job(self, job_id: str) -> _Job | None:
        self._sweep(time.time())
        return self._jobs.get(job_id)

    def running(self, owner: str | None = None) -> int:
        """Jobs running now (of `owner` alone when given)."""
        return sum(
            1
            for job in self._jobs.values()
            if job.status == "scraping" and owner in (None, job.spec.owner)
        )

    def _held(self, owner: str) -> tuple[int, int]:
        """What all jobs hold, and what the jobs of `owner` hold."""
        used = mine = 0
        for job in self._jobs.values():
            n = held_bytes(job.bytes, job.status == "scraping", floor_bytes(job.spec))
            used += n
            mine += n if job.spec.owner == owner else 0
        return used, mine

    async def create(self, spec: JobSpec, items: list[Item]) -> None:
        self._sweep(time.time())
        used, mine = self._held(spec.owner)
        over = over_bound(floor_bytes(spec), used, mine, self.total_bytes, self.key_bytes)
        if over == "key" and self.key_bytes is not None:
            raise StoreFull(mine, self.key_bytes, per_key=True)
        if over == "total" and self.total_bytes is not None:
            raise StoreFull(used, self.total_bytes)
        job = _Job(spec)
        for item in items:
            if item.key not in job.seen:
                job.seen.add(item.key)
                job.frontier.append(item)
                job.total += 1
        self._jobs[spec.id] = job

    async def spec(self, job_id: str) -> JobSpec | None:
        job = self._job(job_id)
        return job.spec if job else None

    async def state(self, job_id: str) -> JobState | None:
        job = self._job(job_id)
        if job is None:
            return None
        return JobState(
            job.status,
            job.total,
            job.completed,
            job.failed,
            job.bytes,
            job.finished_at,
            job.warning,
        )

    async def claim(self, job_id: str, n: int, now: float) -> list[Item]:
        job = self._job(job_id)
        if job is None or job.status != "scraping":
            return []
        spec = job.spec
        for item, deadline in list(job.leases.items()):
            if deadline > now:
                continue
            del job.leases[item]
            attempts = item.attempts + 1
            if attempts >= spec.max_attempts:
                if item.key not in job.done:
                    job.done.add(item.key)
                    job.errors.append(json.dumps(abandoned_error(item, iso(now), attempts)))
                    job.failed += 1
            else:
                job.frontier.appendleft(
                    Item(item.url, item.depth, item.key, attempts, item.kickoff)
                )
        n = min(n, spec.concurrency - len(job.leases))
        if spec.delay_s > 0:
            if now < job.not_before:
                n = 0
            n = min(n, 1)
        out: list[Item] = []
        while len(out) < n and job.frontier:
            item = job.frontier.popleft()
            if item.key in job.done:
                continue
            job.leases[item] = now + spec.lease_s
            out.append(item)
        if out and spec.delay_s > 0:
            job.not_before = now + spec.delay_s
        job.end_if_drained(now)
        return out

    async def renew(self, job_id: str, items: list[Item], now: float) -> None:
        job = self._job(job_id)
        if job is None:
            return
        for item in items:
            if item in job.leases:
                job.leases[item] = now + job.spec.lease_s

    async def release(self, job_id: str, item: Item) -> None:
        job = self._job(job_id)
        if job is not None and job.leases.pop(item, None) is not None:
            job.frontier.appendleft(item)

    async def finish(self, job_id: str, item: Item, done: Finished, now: float) -> FinishResult:
        job = self._job(job_id)
        if job is None:
            return FinishResult("dropped")
        job.leases.pop(item, None)
        if job.status != "scraping":
            return FinishResult("dropped")
        if item.key in job.done:
            return FinishResult("duplicate", job.end_if_drained(now))
        job.done.add(item.key)
        verdict: Verdict = "skipped"
        if done.alias_key and done.alias_key != item.key:
            if done.alias_key in job.seen:
                return FinishResult("duplicate", job.end_if_drained(now))
            job.seen.add(done.alias_key)
        if done.self_blocked:
            job.robots_blocked.append(item.url)
        if done.document is not None:
            size = len(done.document.encode())
            floor = floor_bytes(job.spec)
            grows = held_bytes(job.bytes + size, True, floor) - held_bytes(job.bytes, True, floor)
            used, mine = self._held(job.spec.owner)
            over = over_bound(grows, used, mine, self.total_bytes, self.key_bytes)
            warning = BYTE_BOUND_WARNING if job.bytes + size > job.spec.max_bytes else None
            if warning is None and over is not None:
                warning = KEY_BOUND_WARNING if over == "key" else TOTAL_BOUND_WARNING
            if warning is not None:
                job.stopped = True
                job.warning = warning
                job.frontier.clear()
            else:
                job.docs.append(done.document)
                job.bytes += size
                job.completed += 1
                verdict = "stored"
        if done.error is not None:
            job.errors.append(json.dumps(done.error))
            job.failed += 1
            verdict = "error"
        limit = job.spec.rules.limit if job.spec.rules else 0
        if not job.stopped:
            for new in done.discovered:
                if job.total >= limit:
                    break
                if new.key not in job.seen:
                    job.seen.add(new.key)
                    job.frontier.append(new)
                    job.total += 1
        for key, url in done.blocked:
            if key not in job.seen:
                job.seen.add(key)
                job.robots_blocked.append(url)
        return FinishResult(verdict, job.end_if_drained(now))

    async def documents(self, job_id: str, skip: int, limit: int) -> list[str]:
        job = self._job(job_id)
        return job.docs[skip : skip + limit] if job else []

    async def errors(self, job_id: str) -> tuple[list[str], list[str]]:
        job = self._job(job_id)
        return (list(job.errors), list(job.robots_blocked)) if job else ([], [])

    async def cancel(self, job_id: str, now: float) -> CancelOutcome:
        job = self._job(job_id)
        if job is None:
            return "missing"
        if job.status in ("completed", "failed"):
            return job.status
        job.status = "cancelled"
        job.finished_at = job.finished_at or now
        job.frontier.clear()
        job.leases.clear()
        return "cancelled"

    async def robots(self, job_id: str, origin: str) -> str | None:
        job = self._job(job_id)
        return job.robots.get(origin) if job else None

    async def set_robots(self, job_id: str, origin: str, text: str) -> None:
        job = self._job(job_id)
        if job is not None:
            job.robots[origin] = text

    async def mark_once(self, job_id: str, flag: str) -> bool:
        job = self._job(job_id)
        if job is None or flag in job.flags:
            return False
        job.flags.add(flag)
        return True

    async def beat(self, job_id: str, token: str, until: float, now: float) -> bool:
        job = self._job(job_id)
        if job is None:
            return False
        for other in [t for t, d in job.drivers.items() if d <= now]:
            del job.drivers[other]
        if token not in job.drivers and len(job.drivers) >= job.spec.max_drivers:
            return False
        job.drivers[token] = until
        return True

    async def leave(self, job_id: str, token: str) -> None:
        job = self._job(job_id)
        if job is not None:
            job.drivers.pop(token, None)

    async def live_drivers(self, job_id: str, now: float) -> int:
        job = self._job(job_id)
        return sum(1 for d in job.drivers.values() if d > now) if job else 0

    async def owned(self, owner: str) -> list[str]:
        self._sweep(time.time())
        return [job_id for job_id, job in self._jobs.items() if job.spec.owner == owner]

    async def close(self) -> None:
        self._jobs.clear()
