"""changeTracking (issue 41 item 4) without the network: the format's options, the statuses,
the diff in both shapes, snapshots per key and tag in the scrape cache."""

from __future__ import annotations

import pytest
from openmono_contracts.firecrawl import FirecrawlScrapeRequest
from openmono_scrape.cache import ScrapeCache
from openmono_scrape.errors import BadRequest
from openmono_scrape.firecrawl._changes import (
    ChangeTracker,
    Snapshot,
    field_changes,
    git_diff,
    status_of,
    tracking_of,
)
from openmono_scrape.firecrawl._document import parse_formats

URL = "https://shop.example/p/1"


def _opts(*formats: object) -> FirecrawlScrapeRequest:
    return FirecrawlScrapeRequest.model_validate({"url": URL, "formats": list(formats)})


def test_format_options_and_their_refusals() -> None:
    assert tracking_of(_opts("markdown")) is None
    plain = tracking_of(_opts("markdown", "changeTracking"))
    assert plain is not None and plain.modes == () and plain.tag == "" and plain.ask is None
    full = tracking_of(
        _opts({"type": "changeTracking", "modes": ["git-diff", "json"], "tag": "daily",
               "schema": {"type": "object", "properties": {"price": {"type": "string"}}}})
    )  # fmt: skip
    assert full is not None and full.modes == ("git-diff", "json") and full.ask is not None
    for bad, where in (
        ({"type": "changeTracking", "modes": ["word-diff"]}, "formats.0.modes"),
        ({"type": "changeTracking", "tag": 5}, "formats.0.tag"),
        ({"type": "changeTracking", "modes": ["json"]}, "needs a schema or a prompt"),
    ):
        with pytest.raises(BadRequest, match=where):
            tracking_of(_opts(bad))
    with pytest.raises(BadRequest, match="on scrape only"):
        parse_formats(["changeTracking"])  # a crawl's or batch's formats


def test_statuses() -> None:
    before = Snapshot("2026-12-01T00:00:00Z", 200, "# Clock\n\n£10")
    assert status_of(None, 200, "x") == "new"
    assert status_of(before, 200, "# Clock\n\n£10") == "same"
    assert status_of(before, 200, "# Clock\n\n£12") == "changed"
    assert status_of(before, 404, "") == "removed"
    gone = Snapshot("2026-12-02T00:00:00Z", 404, "")
    assert status_of(gone, 410, "") == "same" and status_of(gone, 200, "back") == "changed"


def test_git_diff_text_and_parse_diff_structure() -> None:
    diff = git_diff("# Clock\n\nPrice: £10\nIn stock", "# Clock\n\nPrice: £12\nIn stock")
    assert "-Price: £10\n+Price: £12" in diff["text"]
    (file,) = diff["json"]["files"]
    assert (file["additions"], file["deletions"]) == (1, 1)
    (chunk,) = file["chunks"]
    kinds = [(c["type"], c["content"]) for c in chunk["changes"]]
    assert ("del", "-Price: £10") in kinds and ("add", "+Price: £12") in kinds
    assert chunk["content"].startswith("@@ -1,4 +1,4 @@")


async def test_snapshots_are_per_key_and_tag_and_compared_in_order() -> None:
    tracker = ChangeTracker(ScrapeCache(1024 * 1024))
    plain = tracking_of(_opts("markdown", {"type": "changeTracking", "modes": ["git-diff"]}))
    assert plain is not None

    async def seen(owner: str, md: str, at: str, status: int = 200) -> tuple[str, str | None]:
        got, _ = await tracker.track(plain, owner, URL, status, md, at, None)
        return got.change_status, got.previous_scrape_at

    assert await seen("anna", "v1", "T1") == ("new", None)
    assert await seen("anna", "v1", "T2") == ("same", "T1")
    assert await seen("ben", "v1", "T3") == ("new", None)  # anna's reads are hers alone
    changed, _ = await tracker.track(plain, "anna", URL + "#x", 200, "v2", "T4", None)
    assert changed.change_status == "changed" and changed.previous_scrape_at == "T2"
    assert changed.diff is not None and "+v2" in changed.diff["text"]
    assert await seen("anna", "", "T5", status=404) == ("removed", "T4")
    tagged = tracking_of(_opts({"type": "changeTracking", "tag": "other"}))
    assert tagged is not None
    got, _ = await tracker.track(tagged, "anna", URL, 200, "v2", "T6", None)
    assert got.change_status == "new"  # another tag, another history


def test_json_mode_names_the_fields_that_changed() -> None:
    before = {"name": "Clock", "price": "£10", "tags": ["wall"]}
    after = {"name": "Clock", "price": "£12", "stock": 3, "tags": ["wall"]}
    assert field_changes(before, after) == {
        "price": {"previous": "£10", "current": "£12"},
        "stock": {"previous": None, "current": 3},
    }
    assert field_changes([1], [1]) == {} and field_changes(1, 2) == {
        "": {"previous": 1, "current": 2}
    }
