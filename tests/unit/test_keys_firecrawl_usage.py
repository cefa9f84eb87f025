"""Firecrawl's team usage from the usage records (openmono_keys.firecrawl): the key's own 2xx
requests on Firecrawl's working endpoints this month count, nothing else does."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from openmono_keys.firecrawl import month_of, team_usage

NOW = datetime(2026, 12, 4, 21, 0, tzinfo=UTC).timestamp()
LAST_MONTH = datetime(2026, 11, 30, 23, 59, tzinfo=UTC).timestamp()


def _write(folder: Path, name: str, rows: list[dict[str, object]]) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows) + "not json\n")


def test_month_bounds_roll_over_the_year() -> None:
    start, end = month_of(datetime(2026, 12, 31, 23, 0, tzinfo=UTC).timestamp())
    assert datetime.fromtimestamp(start, UTC) == datetime(2026, 12, 1, tzinfo=UTC)
    assert datetime.fromtimestamp(end, UTC) == datetime(2027, 1, 1, tzinfo=UTC)


def test_credits_and_tokens_count_the_keys_own_work_this_month(tmp_path: Path) -> None:
    def rec(route: str, status: int = 200, key: str = "anna", ts: float = NOW - 60) -> object:
        return {"ts": ts, "status": status, "key": key, "route": route}

    _write(
        tmp_path,
        "access.log",
        [
            rec("/firecrawl/v2/scrape"),
            rec("/v2/crawl"),
            rec("/firecrawl/v1/batch/scrape"),
            rec("/v2/crawl/" + "0" * 32),  # a status poll
            rec("/v2/scrape", status=400),  # refused
            rec("/v2/scrape", key="ben"),  # another key's
            rec("/v2/scrape", ts=LAST_MONTH),  # last month's
            rec("/v1/chat/completions"),  # not Firecrawl
        ],
    )
    tokens = [
        {"ts": NOW - 5, "key": "anna", "route": "/v1/chat/completions", "status": 200,
         "prompt_tokens": 30, "completion_tokens": 12},
        {"ts": NOW - 5, "key": "ben", "route": "/v1/chat/completions", "status": 200,
         "prompt_tokens": 999},
    ]  # fmt: skip
    _write(tmp_path, "tokens.log", tokens)
    v2 = team_usage(tmp_path, "anna", "v2", "credit-usage", NOW)
    assert v2["success"] is True
    assert v2["data"] == {
        "remainingCredits": 2**31 - 1,
        "planCredits": None,
        "billingPeriodStart": "2026-12-01T00:00:00Z",
        "billingPeriodEnd": "2026-12-31T23:59:59Z",
        "creditsUsed": 3,
    }
    v1 = team_usage(tmp_path, "anna", "v1", "token-usage", NOW)
    assert v1["data"]["tokens_used"] == 42 and v1["data"]["remaining_tokens"] == 2**31 - 1  # type: ignore[index]
    assert team_usage(tmp_path, "carl", "v2", "credit-usage", NOW)["data"]["creditsUsed"] == 0  # type: ignore[index]
