"""Firecrawl's `json` and `summary` formats on the box's own model, through the real gateway.

Stack: the fixture site, the real scrape service, the real Caddy gateway whose LLM route goes to
the session's real llama-server (xllamacpp + SmolLM2-135M, 1024 tokens per slot): the scrape
service asks the model through the gateway with the gateway key, as in the native stack. The
page is the fixture article (one chunk); the schema bounds every string so the small model's
answer cannot run on. v1's shapes (`jsonOptions`, `extract`) are read by the same code once
parsed (tests/unit/test_firecrawl_model.py): one model round here keeps the suite short. The 503
(no model on the box) is in test_firecrawl_api.py, on its stack whose gateway has no LLM
upstream.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import jsonschema_rs
import pytest
from firecrawl import Firecrawl

from tests.support.fixture_web import ARTICLE_SCHEMA as SCHEMA
from tests.support.llama import LlamaServer
from tests.support.web_stack import WebStack, web_stack

pytestmark = pytest.mark.integration

KEY = "firecrawl-model-key-77c2"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, llama: LlamaServer) -> Iterator[WebStack]:
    with web_stack(
        tmp_path_factory.mktemp("fcm"),
        KEY,
        [],
        llama_upstream=llama.url.removeprefix("http://"),
        gateway_env={"LLAMA_UPSTREAM_KEY": llama.api_key},
    ) as s:
        yield s


def test_sdk_v2_json_validates_and_summary_is_text(stack: WebStack, web: str) -> None:
    fc = Firecrawl(api_key=KEY, api_url=stack.firecrawl)
    doc = fc.scrape(
        f"{web}/article",
        formats=[
            {"type": "json", "schema": SCHEMA, "prompt": "The title and the author."},
            "summary",
        ],
        max_age=0,
        timeout=120_000,
    )
    jsonschema_rs.validator_for(SCHEMA).validate(doc.json)
    assert isinstance(doc.summary, str) and doc.summary.strip()
    assert doc.markdown is None  # not asked for: only read by the model


def test_an_invalid_schema_is_400_naming_its_path(stack: WebStack, web: str) -> None:
    bad = {"type": "object", "properties": {"title": {"type": "strin"}}}
    v2 = {"url": f"{web}/article", "formats": [{"type": "json", "schema": bad}]}
    refused = httpx.post(f"{stack.firecrawl}/v2/scrape", json=v2, headers=stack.gateway.auth)
    assert refused.status_code == 400
    error = refused.json()
    assert error["success"] is False
    assert "formats.0.schema" in error["error"] and "/properties/title/type" in error["error"]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the SDK calls extract deprecated
def test_extract_job_v1_start_v2_status_validates(stack: WebStack, web: str) -> None:
    started = httpx.post(
        f"{stack.firecrawl}/v1/extract",
        json={"urls": [f"{web}/article"], "schema": SCHEMA, "prompt": "The title and the author.",
              "showSources": True},
        headers=stack.gateway.auth,
        timeout=60,
    )  # fmt: skip
    assert started.status_code == 200, started.text
    assert started.json()["success"] is True and started.json()["urlTrace"] == []
    fc = Firecrawl(api_key=KEY, api_url=stack.firecrawl)
    job = started.json()["id"]
    status = fc.get_extract_status(job)
    deadline = time.monotonic() + 240
    while status.status == "processing" and time.monotonic() < deadline:
        time.sleep(1)
        status = fc.get_extract_status(job)
    assert status.status == "completed", status
    jsonschema_rs.validator_for(SCHEMA).validate(status.data)
    assert status.expires_at is not None
    assert all(urls == [f"{web}/article"] for urls in (status.sources or {}).values())
