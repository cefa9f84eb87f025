"""The crawl's URL rules, robots.txt, sitemap parsing and the /firecrawl fallback, offline."""

from __future__ import annotations

import gzip

import pytest
from openmono_contracts.crawl import CrawlRules
from openmono_scrape import statuses
from openmono_scrape.crawl import Robots, Scope, check_patterns, normalise, page_key
from openmono_scrape.firecrawl._fallback import not_served
from openmono_scrape.sitemaps import parse_sitemap


def test_normalise_keeps_http_urls_only_and_drops_what_changes_nothing() -> None:
    assert normalise("HTTP://Example.COM:80/a#frag") == "http://example.com/a"
    assert normalise("https://example.com") == "https://example.com/"
    assert normalise("https://example.com:8443/x?b=1&a=2") == "https://example.com:8443/x?b=1&a=2"
    for bad in ("mailto:a@b.c", "javascript:alert(1)", "ftp://x/", "http://", "http://[::1"):
        assert normalise(bad) is None


def test_page_key_merges_similar_urls_unless_told_not_to() -> None:
    same = ["https://www.ex.com/docs/", "http://ex.com/docs", "https://ex.com/docs/index.html"]
    assert len({page_key(u) for u in same}) == 1
    assert len({page_key(u, similar=False) for u in same}) == 3
    assert page_key("https://ex.com/a?x=1", ignore_query=True) == page_key("https://ex.com/a")
    assert page_key("https://ex.com/a?x=1") != page_key("https://ex.com/a?x=2")


def _rules(**kw: object) -> CrawlRules:
    return CrawlRules(limit=100, **kw)  # type: ignore[arg-type]


def test_scope_stays_in_the_start_path_unless_the_whole_domain_is_asked() -> None:
    scope = Scope(_rules(), "https://ex.com/docs/")
    assert scope.admits("https://ex.com/docs/a/b", 1)
    assert scope.admits("https://www.ex.com/docs/x", 1)
    assert not scope.admits("https://ex.com/blog/", 1)
    assert not scope.admits("https://other.com/docs/a", 1)
    assert not scope.admits("https://sub.ex.com/docs/a", 1)
    assert Scope(_rules(crawl_entire_domain=True), "https://ex.com/docs/").admits(
        "https://ex.com/blog/", 1
    )
    assert Scope(_rules(), "https://ex.com/docs").admits("https://ex.com/docs/x", 1)
    assert Scope(_rules(), "https://ex.com/docs/page.html").admits("https://ex.com/docs/y", 1)


def test_scope_hosts_depths_and_patterns() -> None:
    assert Scope(_rules(allow_subdomains=True), "https://ex.com/").admits("https://a.ex.com/", 1)
    assert Scope(_rules(allow_external_links=True), "https://ex.com/").admits(
        "https://other.org/x", 1
    )
    deep = Scope(_rules(max_discovery_depth=2), "https://ex.com/")
    assert deep.admits("https://ex.com/a", 2) and not deep.admits("https://ex.com/a", 3)
    paths = Scope(_rules(max_path_depth=1), "https://ex.com/docs/")
    assert paths.admits("https://ex.com/docs/a", 1) and not paths.admits(
        "https://ex.com/docs/a/b", 1
    )
    pat = Scope(_rules(include_paths=[r"^/docs/\d+$"], exclude_paths=[r"/7$"]), "https://ex.com/")
    assert pat.admits("https://ex.com/docs/3", 1)
    assert not pat.admits("https://ex.com/docs/7", 1)
    assert not pat.admits("https://ex.com/docs/x", 1)
    full = Scope(
        _rules(include_paths=[r"^https://ex\.com/a"], regex_on_full_url=True), "https://ex.com/"
    )
    assert full.admits("https://ex.com/a/1", 1)


def test_check_patterns_names_the_bad_one() -> None:
    assert check_patterns([r"^/ok$", r"\d+"]) is None
    bad = check_patterns(["fine", "(unclosed"])
    assert bad is not None and "(unclosed" in bad
    assert check_patterns(["x" * 501]) is not None


def test_robots_reads_our_group_or_the_star_one_and_lists_sitemaps() -> None:
    text = (
        "User-agent: *\nDisallow: /private/\nAllow: /private/open\n\n"
        "User-agent: OpenMono\nDisallow: /no-bots/\n\nSitemap: https://ex.com/s.xml\n"
    )
    robots = Robots(text)
    assert not robots.allows("https://ex.com/no-bots/x")
    assert robots.allows("https://ex.com/private/x")  # our own group applies, not *
    star = Robots("User-agent: *\nDisallow: /private/\n")
    assert not star.allows("https://ex.com/private/x") and star.allows("https://ex.com/a")
    assert robots.sitemaps() == ["https://ex.com/s.xml"]
    assert Robots(None).allows("https://ex.com/anything")


def test_sitemaps_index_urlset_plain_text_and_an_entity_bomb() -> None:
    index = (
        b'<?xml version="1.0"?><sitemapindex><sitemap><loc>/a.xml.gz</loc></sitemap></sitemapindex>'
    )
    assert parse_sitemap(index, "https://ex.com/s.xml") == ([], ["https://ex.com/a.xml.gz"])
    urlset = gzip.decompress(
        gzip.compress(
            b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            b"<url><loc>https://ex.com/1</loc></url><url><loc>javascript:x</loc></url></urlset>"
        )
    )
    assert parse_sitemap(urlset, "https://ex.com/") == (["https://ex.com/1"], [])
    assert parse_sitemap(b"https://ex.com/a\n\nnot-a-url\n", "https://ex.com/")[0] == [
        "https://ex.com/a"
    ]
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><urlset><url><loc>https://ex.com/&b;</loc>'
        b"</url></urlset>"
    )
    pages, _ = parse_sitemap(bomb, "https://ex.com/")
    assert all(len(p) < 100 for p in pages)


@pytest.mark.parametrize(
    ("method", "rest", "status"),
    [
        ("POST", "v2/agent", 501),
        ("POST", "v1/deep-research", 501),
        ("GET", "v2/team/credit-usage/historical", 501),
        ("POST", "v1/crawl/active", 405),
        ("POST", "v2/team/credit-usage", 405),
        ("GET", "v2/scrape", 405),
        ("PUT", "v1/crawl/abc", 405),
        ("POST", "v2/what", 404),
        ("POST", "v9/scrape", 404),
        ("GET", "", 404),
    ],
)
def test_fallback_names_what_is_supported(method: str, rest: str, status: int) -> None:
    error = not_served(method, rest)
    assert statuses.status_of(error, "firecrawl") == status
    if status != 405:
        assert "supported here: scrape, search, map, crawl" in error.message
