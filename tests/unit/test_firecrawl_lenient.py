"""v1 names on v2 and v2's on v1 (issue 41 item 6): read for their meaning, never dropped
without a word in `warning`; the request's own version's name wins when both are given."""

from __future__ import annotations

from openmono_contracts.firecrawl import FirecrawlScrapeRequest
from openmono_contracts.firecrawl_jobs import FirecrawlCrawlRequest, FirecrawlMapRequest
from openmono_scrape.firecrawl._lenient import crawl_warnings, map_warnings, scrape_warnings

URL = "https://example.com/"


def _crawl(**body: object) -> FirecrawlCrawlRequest:
    return FirecrawlCrawlRequest.model_validate({"url": URL, **body})


def test_difys_v1_names_on_a_v2_crawl_are_read_and_named() -> None:
    # the shape Dify's Firecrawl plugin sends to /v2/crawl
    req = _crawl(maxDepth=2, ignoreSitemap=True, allowBackwardLinks=True, limit=5)
    assert req.max_depth == 2  # the service applies it as the path depth (as v1 does)
    assert req.sitemap_mode("v2") == "skip" and req.entire_domain() is True
    warned = crawl_warnings(req, "v2")
    assert [w.split(" ")[0] for w in warned] == ["maxDepth", "ignoreSitemap", "allowBackwardLinks"]
    assert all("Firecrawl v1's name, not v2's" in w for w in warned)
    assert crawl_warnings(req, "v1") == []  # the same names are v1's own


def test_own_versions_name_wins_and_the_other_is_named_as_not_applied() -> None:
    req = _crawl(sitemap="include", ignoreSitemap=True)
    assert req.sitemap_mode("v2") == "include" and req.sitemap_mode("v1") == "skip"
    (v2_note,) = crawl_warnings(req, "v2")
    assert v2_note.startswith("ignoreSitemap") and "not applied" in v2_note
    (v1_note,) = crawl_warnings(req, "v1")
    assert v1_note.startswith("sitemap ") and "not applied" in v1_note
    both = _crawl(crawlEntireDomain=False, allowBackwardLinks=True)
    assert both.entire_domain() is False
    assert "not applied" in crawl_warnings(both, "v2")[0]


def test_v2_sitemap_on_a_v1_map_and_v1_names_on_a_v2_map() -> None:
    v2_on_v1 = FirecrawlMapRequest.model_validate({"url": URL, "sitemap": "only"})
    assert v2_on_v1.sitemap_mode("v1") == "only"
    assert map_warnings(v2_on_v1, "v1")[0].startswith("sitemap is Firecrawl v2's name")
    v1_on_v2 = FirecrawlMapRequest.model_validate({"url": URL, "sitemapOnly": True})
    assert v1_on_v2.sitemap_mode("v2") == "only"
    assert map_warnings(v1_on_v2, "v2")[0].startswith("sitemapOnly is Firecrawl v1's name")
    assert map_warnings(v1_on_v2, "v1") == [] and map_warnings(v2_on_v1, "v2") == []


def test_scrape_formats_and_json_options_across_versions() -> None:
    v1_body = {"url": URL, "formats": ["json"], "jsonOptions": {"prompt": "the title"}}
    req = FirecrawlScrapeRequest.model_validate(v1_body)
    assert scrape_warnings(req, "v1") == []
    assert scrape_warnings(req, "v2")[0].startswith("jsonOptions is Firecrawl v1's name")
    v2_body = {"url": URL, "formats": [{"type": "markdown"}, "extract"]}
    objects = FirecrawlScrapeRequest.model_validate(v2_body)
    assert scrape_warnings(objects, "v1")[0].startswith("formats.0: a format object")
    assert scrape_warnings(objects, "v2")[0].startswith("formats.1: 'extract' is Firecrawl v1's")
    crawl = _crawl(scrapeOptions={"formats": [{"type": "html"}]})
    assert crawl_warnings(crawl, "v1")[0].startswith("scrapeOptions.formats.0")
