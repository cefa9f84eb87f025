"""Firecrawl's `team/credit-usage` and `team/token-usage`, per gateway key, from the usage records.

The gateway sends `GET /firecrawl/{v1,v2}/team/{credit-usage,token-usage}` here (not to the scrape
service, which holds no usage records and needs no secret for them), with the key's name in
`X-OpenMono-Key` and the gateway's secret; each key sees its own numbers only. The period is the
current calendar month (UTC), as Firecrawl's billing period:
- credits used: the key's requests answered 2xx on an endpoint that makes Firecrawl work
  (`scrape`, `search`, `map`, `crawl`, `batch/scrape`, `extract`, under `/firecrawl/v1|v2` or
  `/v2`), one each: a crawl counts once, not per page (its pages are read by the worker tier,
  outside the gateway's records), polls of a job's status count nothing;
- tokens used: prompt and completion tokens of the key's LLM requests (the token tap's records;
  without the tap, GATEWAY_USAGE_TOKENS off, it is 0).
Nothing is ever refused for credits here: `remaining*` says `UNLIMITED`, `plan*` null.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from openmono_contracts.firecrawl_team import (
    CreditUsageV1,
    CreditUsageV2,
    TeamUsageResponse,
    TokenUsageV1,
    TokenUsageV2,
)

from openmono_keys.usage import read_records, read_token_records, record_files

PATH = re.compile(r"^/firecrawl/(v1|v2)/team/(credit-usage|token-usage)$")
_BILLABLE = re.compile(r"^/(?:firecrawl/)?v[12]/(?:scrape|search|map|crawl|batch/scrape|extract)$")
Version = Literal["v1", "v2"]
What = Literal["credit-usage", "token-usage"]


def month_of(now: float) -> tuple[float, float]:
    """The calendar month (UTC) holding `now`: its first second and the next month's."""
    at = datetime.fromtimestamp(now, UTC)
    start = at.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    after = (
        start.replace(year=start.year + 1, month=1)
        if start.month == 12
        else start.replace(month=start.month + 1)
    )
    return start.timestamp(), after.timestamp()


def credits_used(folder: Path, key: str, since: float, until: float) -> int:
    n = 0
    for record in read_records(record_files(folder)):
        if record is None or record.who != key or not since <= record.ts < until:
            continue
        if 200 <= record.status < 300 and _BILLABLE.match(record.where):
            n += 1
    return n


def tokens_used(folder: Path, key: str, since: float, until: float) -> int:
    n = 0
    for record in read_token_records(record_files(folder, "tokens")):
        if record is None or record.key != key or not since <= record.ts < until:
            continue
        n += (record.prompt_tokens or 0) + (record.completion_tokens or 0)
    return n


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def team_usage(
    folder: Path, key: str, version: Version, what: What, now: float
) -> dict[str, object]:
    """The answer's body (reads every record file: run it off the event loop)."""
    since, until = month_of(now)
    start, end = _iso(since), _iso(until - 1)
    data: CreditUsageV1 | CreditUsageV2 | TokenUsageV1 | TokenUsageV2
    if what == "credit-usage":
        used = credits_used(folder, key, since, until)
        credit = CreditUsageV1 if version == "v1" else CreditUsageV2
        data = credit(credits_used=used, billing_period_start=start, billing_period_end=end)
    else:
        used = tokens_used(folder, key, since, until)
        token = TokenUsageV1 if version == "v1" else TokenUsageV2
        data = token(tokens_used=used, billing_period_start=start, billing_period_end=end)
    return TeamUsageResponse(data=data).model_dump(mode="json", by_alias=True)
