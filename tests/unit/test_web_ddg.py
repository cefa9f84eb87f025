"""The DuckDuckGo HTML fallback: parsing result pages, redirect links, challenges."""

from __future__ import annotations

import pytest
from openmono_worker.web import SearchDegraded, decode_link, parse_duckduckgo

from tests.support.fake_ddg import page


def test_results_are_parsed_with_decoded_links_and_no_ads_or_duplicates() -> None:
    result = parse_duckduckgo(page("results.html"))
    assert [h.url for h in result.hits] == [
        "https://caddyserver.com/docs/caddyfile/directives/reverse_proxy",
        "https://example.org/guides/caddy?page=2&lang=en",
        "https://github.com/caddyserver/caddy",
    ]
    first = result.hits[0]
    assert first.title == "reverse_proxy (Caddyfile directive) — Caddy Documentation"
    assert first.snippet.startswith("Proxies requests to one or more backends")
    assert "load balancing" in first.snippet
    assert result.hits[1].title == "A Caddy guide: Q&A"
    assert result.hits[1].snippet == "Step by step: put Caddy in front of an app."


def test_max_results() -> None:
    assert len(parse_duckduckgo(page("results.html"), max_results=1).hits) == 1


def test_a_no_results_page_is_an_empty_answer() -> None:
    assert parse_duckduckgo(page("no_results.html")).hits == []


def test_a_challenge_page_is_degraded_not_empty() -> None:
    with pytest.raises(SearchDegraded, match="challenge"):
        parse_duckduckgo(page("challenge.html"))


def test_an_unknown_page_is_degraded_not_empty() -> None:
    with pytest.raises(SearchDegraded):
        parse_duckduckgo("<html><body><p>Something else entirely</p></body></html>")


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        (
            "//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.example%2Fx%3Fy%3D1&rut=abc",
            "https://a.example/x?y=1",
        ),
        ("https://duckduckgo.com/l/?uddg=http%3A%2F%2Fb.example%2F", "http://b.example/"),
        ("/l/?uddg=https%3A%2F%2Fc.example%2F&rut=1", "https://c.example/"),
        ("https://duckduckgo.com/y.js?ad_domain=ads.example", None),
        ("//duckduckgo.com/l/?rut=abc", None),
        ("//duckduckgo.com/l/?uddg=javascript%3Aalert(1)", None),
        ("https://d.example/page", "https://d.example/page"),
        ("javascript:alert(1)", None),
        ("", None),
    ],
)
def test_decode_link(href: str, expected: str | None) -> None:
    assert decode_link(href) == expected
