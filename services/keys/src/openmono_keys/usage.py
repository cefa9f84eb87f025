"""Usage per key from the gateway's own access records (caddy/Caddyfile, "usage").

Caddy writes one JSON object a line to `access.log` and rolls it by size into
`access-<time>.log[.gz]` beside it. Each line carries the key's name (`key`: a box's name,
`operator`, or empty for a refused request), the route (the path, no query), the status, the
bytes sent (`size`) and the upstream time. A response the client dropped mid-stream has only the
fields written before the request was handled (`claim`, `path`; the Caddyfile says why) and counts
under its claim. Nothing else of the request is kept (the Caddyfile's filter drops headers, URI,
TLS details), so these files never hold a key, a prompt or a body. A line that is not such a
record is counted, not fatal.

Token counts are in the response body, which Caddy passes on unread: the token tap
(`openmono_keys.tap`) writes them beside the access records, `tokens.log` rolled into
`tokens-<ns>.log`, one `TokenRecord` (numbers, key name, route) a line, and they are added to the
same rows here.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from openmono_contracts.gatewaykeys import AccessRecord, TokenRecord, UsageReport, UsageRow
from pydantic import BaseModel, ValidationError

from openmono_keys.errors import ValueInvalid

_Record = TypeVar("_Record", bound=BaseModel)
_Timed = TypeVar("_Timed", AccessRecord, TokenRecord)
_SPAN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(m|min|h|d|w)\s*$")
_SECONDS = {"m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(text: str, now: float) -> float:
    """`30m`, `24h`, `7d`, `2w` ago, or an ISO date/time (UTC unless it names a zone)."""
    span = _SPAN.match(text)
    if span:
        return now - float(span.group(1)) * _SECONDS[span.group(2)]
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueInvalid(
            f"--since {text!r}: give a span (30m, 24h, 7d) or a date (2026-01-31, 2026-01-31T08:00)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


def record_files(folder: Path, stem: str = "access") -> list[Path]:
    """The current file and the rolled ones, oldest first (`stem`: access or tokens)."""
    if not folder.is_dir():
        return []
    rolled = sorted(p for p in folder.glob(f"{stem}-*.log*") if p.is_file())
    current = folder / f"{stem}.log"
    return [*rolled, current] if current.is_file() else rolled


def _lines(path: Path) -> Iterator[bytes]:
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as fh:
                yield from fh
        else:
            with path.open("rb") as fh:
                yield from fh
    except (OSError, EOFError):
        return  # rolled away or cut short while we read: the rest of the files still count


def _read(files: Iterable[Path], model: type[_Record]) -> Iterator[_Record | None]:
    """Each line as a `model`, or None for a line that is not one."""
    for path in files:
        for line in _lines(path):
            if not line.strip():
                continue
            try:
                yield model.model_validate_json(line)
            except ValidationError:
                yield None


def read_records(files: Iterable[Path]) -> Iterator[AccessRecord | None]:
    return _read(files, AccessRecord)


def read_token_records(files: Iterable[Path]) -> Iterator[TokenRecord | None]:
    return _read(files, TokenRecord)


def _in_window(
    records: Iterable[_Timed | None], since: float | None, report: UsageReport
) -> Iterator[_Timed]:
    """The records at or after `since`; a line that was no record counts as unreadable."""
    for record in records:
        if record is None:
            report.unreadable += 1
        elif since is None or record.ts >= since:
            yield record


def summarize(
    records: Iterable[AccessRecord | None],
    since: float | None = None,
    tokens: Iterable[TokenRecord | None] = (),
) -> UsageReport:
    report = UsageReport(since=since)
    rows: dict[tuple[str, str], UsageRow] = {}
    for record in _in_window(records, since, report):
        report.records += 1
        where = (record.who, record.where)
        row = rows.setdefault(where, UsageRow(key=record.who, route=record.where))
        row.requests += 1
        status = str(record.status)
        row.statuses[status] = row.statuses.get(status, 0) + 1
        row.bytes_out += record.size
        row.upstream_ms += record.upstream_ms or 0.0
        row.dropped += record.aborted
        row.last_used = max(row.last_used or 0.0, record.ts)
    for counted in _in_window(tokens, since, report):
        if counted.prompt_tokens is None and counted.completion_tokens is None:
            continue
        row = rows.setdefault(
            (counted.key, counted.route), UsageRow(key=counted.key, route=counted.route)
        )
        row.counted += 1
        row.prompt_tokens += counted.prompt_tokens or 0
        row.completion_tokens += counted.completion_tokens or 0
        row.cached_tokens += counted.cached_tokens or 0
    report.rows = sorted(rows.values(), key=lambda r: (r.key, r.route))
    return report


def usage(folder: Path, since: float | None = None) -> UsageReport:
    tokens = read_token_records(record_files(folder, "tokens"))
    return summarize(read_records(record_files(folder)), since, tokens)


def last_used(report: UsageReport) -> dict[str, float]:
    """Key name -> the time of its last request."""
    out: dict[str, float] = {}
    for row in report.rows:
        if row.last_used is not None:
            out[row.key] = max(out.get(row.key, 0.0), row.last_used)
    return out
