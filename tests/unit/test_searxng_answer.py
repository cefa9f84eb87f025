"""SearXNG's answer as a contract (`openmono_contracts.searxng`): the recorded real responses,
read by the one normaliser, and both callers (the agent's WebSearch through the gateway, the
scrape service's Firecrawl search) seeing the same hits and the same failures."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openmono_contracts.searxng import SearxngAnswer, SearxngError, dedupe_key, normalise
from openmono_scrape.errors import SearchFailed
from openmono_scrape.firecrawl._searxng import parse as firecrawl_parse
from openmono_worker.web import GatewayError, normalise_searxng

from tests.support.fake_searxng import FIXTURES, body_for, load

ANSWERS = sorted(p.name for p in FIXTURES.glob("*.json"))


def test_results_keep_order_titles_snippets_and_suggestions() -> None:
    page = normalise_searxng(load("offline_localjson.json"))
    assert [h.url for h in page.hits] == [
        "https://example.org/hello/p1/r1",
        "https://example.org/hello/p1/r2",
        "https://example.org/hello/p1/r3",
    ]
    assert page.hits[0].title == "Result 1 for hello (page 1)"
    assert page.hits[0].snippet == "Snippet 1 about hello."
    assert page.hits[0].engines == ("localjson",)
    assert page.suggestions == ["hello tutorial", "hello example"]
    assert page.unresponsive_engines == []


def test_unresponsive_engines_are_named_not_their_translated_messages() -> None:
    page = normalise_searxng(load("offline_mixed_failures.json"))
    assert len(page.hits) == 3
    assert page.unresponsive_engines == [
        "localbadjson",
        "localdown",
        "localerror",
        "localforbidden",
        "localratelimit",
        "localslow",
    ]


def test_rows_with_null_url_are_skipped() -> None:
    body = load("offline_demo_typed_result.json")
    assert all(row["url"] is None for row in body["results"])
    assert normalise_searxng(body).hits == []


def test_duplicates_are_dropped_keeping_the_best_scored_first() -> None:
    body = body_for("duplicates")
    assert len(body["results"]) == 5
    page = normalise_searxng(body)
    assert [h.url for h in page.hits] == [
        "https://example.org/hello/p1/r1",
        "https://example.org/hello/p1/r2",
        "https://example.org/hello/p1/r3",
    ]


def test_number_of_results_is_accepted_but_not_required() -> None:
    legacy = body_for("legacy")
    assert "number_of_results" in legacy
    assert len(normalise_searxng(legacy).hits) == 3
    modern = load("offline_localjson.json")
    assert "number_of_results" not in modern
    assert len(normalise_searxng(modern).hits) == 3


def test_max_results_cuts_after_dedupe() -> None:
    page = normalise_searxng(body_for("duplicates"), max_results=2)
    assert [h.url for h in page.hits] == [
        "https://example.org/hello/p1/r1",
        "https://example.org/hello/p1/r2",
    ]


@pytest.mark.parametrize(
    "body",
    [
        {"error": "No query"},
        ["not", "an", "object"],
        {"query": "x"},
        {"query": "x", "results": "nope"},
    ],
)
def test_bodies_that_are_not_search_answers_are_gateway_errors(body: object) -> None:
    with pytest.raises(GatewayError):
        normalise_searxng(json.loads(json.dumps(body)))


@pytest.mark.parametrize("name", ANSWERS)
def test_every_recorded_answer_is_read_alike_by_both_callers(name: str) -> None:
    body = load(name)
    SearxngAnswer.model_validate(body)  # the model accepts what SearXNG really sends
    page = normalise(body)
    assert normalise_searxng(body) == page
    if page.broken:
        with pytest.raises(SearchFailed):
            firecrawl_parse(body, 10)
    else:
        assert firecrawl_parse(body, 10) == page.hits[:10]
    all_failed = name.startswith("default_engines_offline") or "without_enable_http" in name
    assert page.broken == all_failed


def _rows(*urls: Any) -> dict[str, Any]:
    return {"results": [{"url": u, "title": f"t{i}", "content": " a \n b "} for i, u in
                        enumerate(urls)]}  # fmt: skip


def test_url_rules() -> None:
    page = normalise(
        _rows(
            "https://Example.ORG/Docs/",
            "HTTPS://example.org/Docs#intro",  # same page: scheme and host case, fragment, slash
            "https://example.org/docs",  # another page: the path's case counts
            " https://example.org/pad ",  # surrounding space is not part of the URL
            "ftp://example.org/file",  # not fetchable
            "javascript:alert(1)",
            "",
            None,
            42,
        )
    )
    assert [h.url for h in page.hits] == [
        "https://Example.ORG/Docs/",
        "https://example.org/docs",
        "https://example.org/pad",
    ]
    assert page.hits[0].snippet == "a b"
    assert dedupe_key("HTTP://A.b/X/#y") == dedupe_key("http://a.b/X") != dedupe_key("http://a.b/x")


def test_rows_of_other_shapes_are_skipped_not_fatal() -> None:
    body = {
        "results": ["junk", {"url": "https://a.example/", "title": None, "engines": [1, "x"]}],
        "unresponsive_engines": [["brave", "timeout"], "ddg", [], ["brave", "again"]],
        "answers": [{"answer": " forty  two "}, 7],
        "number_of_results": "many",
    }
    page = normalise(body)
    assert [(h.url, h.title, h.engines) for h in page.hits] == [
        ("https://a.example/", "https://a.example/", ("x",))
    ]
    assert page.unresponsive_engines == ["brave", "ddg"]
    assert page.answers == ["forty two"]
    with pytest.raises(SearxngError):
        normalise({"query": "x", "results": {"not": "a list"}})
