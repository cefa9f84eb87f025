"""The fixture pages of bench/firecrawl_json_pages.py agree with their manifest, without a model:
every page exists and is listed, every schema is one the json format accepts, every true value
validates against its page's schema and can be read on its page, and the long pages are longer
than one chunk of the bundled model's context. Also the bench's scoring rules."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import jsonschema_rs
import pytest
from openmono_scrape.extract import extract
from openmono_scrape.model import checked

from bench.firecrawl_json_pages import DATA, field_score, page_scores

MANIFEST: dict[str, Any] = json.loads((DATA / "manifest.json").read_text())
PAGES: list[dict[str, Any]] = MANIFEST["pages"]
# room for the page at the native stack's default context (LLAMA_CTX_SIZE 8192, one slot): less
# the answer (SCRAPE_LLM_ANSWER_TOKENS 1024) and ~400 tokens of instructions and schema, at the
# json format's 3 characters a token (scrapling/README.md)
ONE_CHUNK_CHARS = (8192 - 1024 - 400) * 3


def _visible_text(name: str) -> str:
    raw = (DATA / name).read_text()
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", raw)).split())


def test_every_page_is_listed_once_and_exists() -> None:
    listed = [row["page"] for row in PAGES]
    assert len(listed) == len(set(listed)) == 30
    assert sorted(listed) == sorted(p.name for p in DATA.glob("*.html"))
    for kind in ("product", "article", "docs"):
        assert sum(row["type"] == kind for row in PAGES) == 10
    size = sum(p.stat().st_size for p in DATA.iterdir())
    assert size < 600_000


@pytest.mark.parametrize("kind", ["product", "article", "docs"])
def test_schemas_are_accepted_by_the_json_format(kind: str) -> None:
    schema = MANIFEST["schemas"][kind]
    jsonschema_rs.meta.validate(schema)
    checked(schema, "formats.0.schema")  # BadRequest if the service would refuse it
    assert MANIFEST["prompts"][kind]


@pytest.mark.parametrize("row", PAGES, ids=[row["page"] for row in PAGES])
def test_true_values_validate_and_are_on_the_page(row: dict[str, Any]) -> None:
    validator = checked(MANIFEST["schemas"][row["type"]], "schema")
    expected = row["expected"]
    assert validator.is_valid(expected), list(validator.iter_errors(expected))
    text = _visible_text(row["page"])
    words: list[str] = []
    for key, value in expected.items():
        if key in ("date", "version", "price", "currency", "in_stock"):
            continue  # shown in the page's own format (14 March 2026, 39,95 €, Sold out)
        if isinstance(value, str):
            words.append(value)
        elif key == "functions":
            for fn in value:
                words += [fn["name"], *fn["parameters"]]
        else:
            words += value
    missing = [w for w in words if w not in text]
    assert not missing, f"{row['page']} does not show {missing}"


def test_long_pages_need_more_than_one_chunk() -> None:
    for row in PAGES:
        url = f"http://127.0.0.1:1/{row['page']}"
        markdown = extract((DATA / row["page"]).read_text(), url, "markdown", True).content
        assert (len(markdown) > ONE_CHUNK_CHARS) is row["long"], (row["page"], len(markdown))


def test_scoring_rules() -> None:
    assert field_score("V2.3.0 ", "2.3.0") == 1.0
    assert field_score("Brass  tide clock.", "Brass Tide Clock") == 1.0
    assert field_score(39.95, 39.95) == field_score(18800, 18800.0) == 1.0
    assert field_score(39.9, 39.95) == 0.0
    assert field_score(1, True) == 0.0
    assert field_score(["Rail", "x"], ["rail", "europe"]) == 0.5
    want = [{"name": "get", "parameters": ["url", "timeout"]}]
    assert field_score([{"name": "get", "parameters": ["url"]}], want) == pytest.approx(
        0.5 + 0.5 * 2 / 3
    )
    assert field_score([{"name": "tidekit.get", "parameters": ["url", "timeout"]}], want) == 1.0
    assert page_scores("not an object", {"a": "x"}) == {"a": 0.0}
