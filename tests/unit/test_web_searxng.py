"""Normalising SearXNG answers: the recorded real responses, as the gateway path reads them."""

from __future__ import annotations

import json

import pytest
from openmono_worker.web import GatewayError, normalise_searxng

from tests.support.fake_searxng import body_for, load


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
