"""Finding 14: bodies that are not JSON at all got FastAPI's `{"detail": ...}` under `/firecrawl`.

Bytes that are not UTF-8, nesting deeper than Python's JSON parser goes and a number with more
digits than Python reads were answered `400 {"detail": "There was an error parsing the body"}`,
which Firecrawl clients do not read as an error of theirs. Through the real gateway and the real
scrape service: everything under `/firecrawl` and `/v2` answers 400 in Firecrawl's shape, saying
why; `/scrape` answers the same bodies in its own shape (422 with a `detail` list, as for any body
that does not validate).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support.crawl_stack import CrawlStack, crawl_stack

pytestmark = pytest.mark.integration

KEY = "error-shape-key-9c3a"

BODIES = {
    "invalid UTF-8": (b'{"url": "http://127.0.0.1/\xff\xfe"}', "not valid UTF-8"),
    "nested too deeply": (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    "a number too long": (b'{"url": "http://127.0.0.1/", "limit": ' + b"9" * 5000 + b"}", "digits"),
    "truncated JSON": (b'{"url": ', "not valid JSON"),
}
FIRECRAWL_PATHS = (
    "/firecrawl/v1/scrape",
    "/firecrawl/v2/scrape",
    "/firecrawl/v1/crawl",
    "/firecrawl/v2/batch/scrape",
    "/v2/scrape",
    "/v2/crawl",
)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CrawlStack]:
    with crawl_stack(tmp_path_factory.mktemp("shape"), KEY, durable=False) as s:
        yield s


def _post(stack: CrawlStack, path: str, body: bytes) -> httpx.Response:
    headers = {**stack.gateway.auth, "Content-Type": "application/json"}
    return httpx.post(f"{stack.gateway.url}{path}", content=body, headers=headers, timeout=30)


@pytest.mark.parametrize("path", FIRECRAWL_PATHS)
@pytest.mark.parametrize("case", list(BODIES))
def test_unreadable_bodies_get_firecrawls_shape(stack: CrawlStack, path: str, case: str) -> None:
    body, said = BODIES[case]
    r = _post(stack, path, body)
    assert r.status_code == 400, r.text
    got = r.json()
    assert got["success"] is False and "detail" not in got
    assert got["error"].startswith("Bad Request: ") and said in got["error"]
    assert "Traceback" not in r.text and "\\xff" not in r.text


@pytest.mark.parametrize("case", list(BODIES))
def test_scrape_answers_them_in_its_own_shape(stack: CrawlStack, case: str) -> None:
    body, said = BODIES[case]
    r = _post(stack, "/scrape", body)
    assert r.status_code == 422, r.text
    (detail,) = r.json()["detail"]
    assert detail["loc"][0] == "body" and detail["type"] == "json_invalid"
    assert said in detail["msg"] or case == "truncated JSON"


def test_a_query_that_does_not_validate_is_firecrawls_400_too(stack: CrawlStack) -> None:
    r = httpx.get(
        f"{stack.gateway.url}/firecrawl/v2/crawl/{'0' * 32}?skip=-1",
        headers=stack.gateway.auth,
        timeout=30,
    )
    assert r.status_code == 400 and r.json()["success"] is False, r.text
    assert "skip" in r.json()["error"]
