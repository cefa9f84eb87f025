"""Firecrawl's `changeTracking` format on scrape: this page's markdown against the last one.

Every scrape with `changeTracking` keeps a snapshot of the page's markdown (and its status) in the
scrape cache, under a name made of the gateway key, the format's `tag` and the normalised URL:
snapshots are per key (one key never sees when another read a page, nor what it read) and per
tag, and the cache's byte bound and LRU hold them as any page (an evicted snapshot makes the next
scrape `new` again). The comparison:
- `new`: no snapshot (`previousScrapeAt` null); `same`: the same markdown and status class;
  `changed`: another markdown; `removed`: the page answers 404 or 410 where it did not before;
- `visibility`: `visible` (the page was asked for by its URL; this server keeps no site memory to
  call a page `hidden`);
- `modes`: `git-diff` gives `diff: {text, json}` (a unified diff of the markdown lines, and the
  same in the structure of the parse-diff library Firecrawl answers with), `json` gives `json:
  {field: {previous, current}}` for the top-level fields whose values the box's model extracted
  differently from the two versions (a `schema` or `prompt` in the format, as for `json`); both
  only when `changed`.
A page served from the cache is compared like a fetched one: its markdown against the snapshot.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from openmono_contracts.firecrawl import (
    ChangeStatus,
    FirecrawlChangeTracking,
    FirecrawlScrapeOptions,
)

from openmono_scrape.cache import ScrapeCache, normalise_url
from openmono_scrape.errors import BadRequest
from openmono_scrape.firecrawl._model_formats import json_ask
from openmono_scrape.model import JsonAsk, PageModel

MODES = ("git-diff", "json")
_GONE = (404, 410)
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Tracking:
    modes: tuple[str, ...]
    tag: str
    ask: JsonAsk | None  # json mode: what the model extracts from both versions


def _bad(where: str, why: str) -> BadRequest:
    return BadRequest(f"Bad Request: {where}: {why}", [{"path": [where], "message": why}])


def tracking_of(opts: FirecrawlScrapeOptions) -> Tracking | None:
    """The format's options; 400 for a mode, tag or json-mode schema that cannot be."""
    for i, item in enumerate(opts.formats):
        name = item.get("type") if isinstance(item, dict) else item
        if name not in ("changeTracking", "change_tracking"):  # the SDK's spelling too
            continue
        body = item if isinstance(item, dict) else {}
        where = f"formats.{i}"
        modes = body.get("modes", [])
        if not isinstance(modes, list) or any(m not in MODES for m in modes):
            raise _bad(f"{where}.modes", f"a list of {', '.join(MODES)}")
        tag = body.get("tag") or ""
        if not isinstance(tag, str) or len(tag) > 100:
            raise _bad(f"{where}.tag", "a string of at most 100 characters")
        ask = json_ask("json", body, None, where) if "json" in modes else None
        return Tracking(tuple(dict.fromkeys(modes)), tag, ask)
    return None


def snapshot_key(owner: str, tag: str, url: str) -> str:
    raw = json.dumps(["changeTracking", owner, tag, normalise_url(url)]).encode()
    return "ct-" + hashlib.sha256(raw).hexdigest()


@dataclass(frozen=True)
class Snapshot:
    at: str
    status: int
    markdown: str

    def encode(self) -> bytes:
        return json.dumps({"at": self.at, "status": self.status, "md": self.markdown}).encode()

    @classmethod
    def decode(cls, raw: bytes | None) -> Snapshot | None:
        if raw is None:
            return None
        try:
            got = json.loads(raw)
            return cls(str(got["at"]), int(got["status"]), str(got["md"]))
        except (ValueError, KeyError, TypeError):
            return None  # an unreadable snapshot is no snapshot: the page is `new`


def status_of(previous: Snapshot | None, status: int, markdown: str) -> ChangeStatus:
    if previous is None:
        return "new"
    if status in _GONE and previous.status not in _GONE:
        return "removed"
    same = previous.markdown == markdown and (status in _GONE) == (previous.status in _GONE)
    return "same" if same else "changed"


def git_diff(before: str, after: str) -> dict[str, Any]:
    """`{text, json}`: the unified diff, and parse-diff's structure of it."""
    lines = list(
        difflib.unified_diff(
            before.splitlines(), after.splitlines(), "previous", "current", lineterm=""
        )
    )
    text = "\n".join(lines)
    chunks: list[dict[str, Any]] = []
    additions = deletions = 0
    old_ln = new_ln = 0
    for line in lines[2:]:
        changes = chunks[-1]["changes"] if chunks else None
        hunk = _HUNK.match(line)
        if hunk:
            old_ln, new_ln = int(hunk.group(1)), int(hunk.group(3))
            chunks.append(
                {
                    "content": line,
                    "changes": [],
                    "oldStart": old_ln,
                    "oldLines": int(hunk.group(2) or 1),
                    "newStart": new_ln,
                    "newLines": int(hunk.group(4) or 1),
                }
            )
        elif changes is not None and line.startswith("+"):
            changes.append({"type": "add", "add": True, "ln": new_ln, "content": line})
            new_ln += 1
            additions += 1
        elif changes is not None and line.startswith("-"):
            changes.append({"type": "del", "del": True, "ln": old_ln, "content": line})
            old_ln += 1
            deletions += 1
        elif changes is not None:
            changes.append(
                {"type": "normal", "normal": True, "ln1": old_ln, "ln2": new_ln, "content": line}
            )
            old_ln += 1
            new_ln += 1
    files = [{"from": "previous", "to": "current", "chunks": chunks,
              "additions": additions, "deletions": deletions}]  # fmt: skip
    return {"text": text, "json": {"files": files}}


def field_changes(before: Any, after: Any) -> dict[str, Any]:
    """`{field: {previous, current}}` for the top-level fields whose values differ (a value that
    is not an object is compared whole, under the field "")."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return {} if before == after else {"": {"previous": before, "current": after}}
    return {
        k: {"previous": before.get(k), "current": after.get(k)}
        for k in dict.fromkeys([*before, *after])
        if before.get(k) != after.get(k)
    }


async def json_changes(
    model: PageModel, ask: JsonAsk, before: str, after: str, url: str
) -> tuple[dict[str, Any], list[str]]:
    """What the model reads differently in the two versions (two calls, or more per chunk)."""
    old = await model.json(ask, before, url)
    new = await model.json(ask, after, url)
    warnings = old.warnings + [w for w in new.warnings if w not in old.warnings]
    return field_changes(old.value, new.value), warnings


class ChangeTracker:
    def __init__(self, cache: ScrapeCache) -> None:
        self.cache = cache

    async def track(
        self,
        tracking: Tracking,
        owner: str,
        url: str,
        status: int,
        markdown: str,
        now_iso: str,
        model: PageModel | None,
    ) -> tuple[FirecrawlChangeTracking, list[str]]:
        key = snapshot_key(owner, tracking.tag, url)
        previous = Snapshot.decode(await self.cache.get_raw(key))
        await self.cache.put_raw(key, Snapshot(now_iso, status, markdown).encode())
        change = status_of(previous, status, markdown)
        out = FirecrawlChangeTracking(
            previous_scrape_at=previous.at if previous else None,
            change_status=change,
            visibility="visible",
        )
        warnings: list[str] = []
        if change == "changed" and previous is not None:
            if "git-diff" in tracking.modes:
                out.diff = git_diff(previous.markdown, markdown)
            if tracking.ask is not None and model is not None:
                out.json_, warnings = await json_changes(
                    model, tracking.ask, previous.markdown, markdown, url
                )
        return out, warnings
