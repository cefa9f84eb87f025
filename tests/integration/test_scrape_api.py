"""`POST /scrape` and `GET /health` on a real service process against the fixture site.

Fast-path behaviour only; everything that needs Chromium is in test_scrape_browser.py. The
service runs with SCRAPE_ALLOW_CIDRS=127.0.0.0/8 on purpose (the fixture site is on loopback) and
with system DNS off, so no test sends a DNS query anywhere.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.support import fixture_web as fw
from tests.support.fixture_web import Canary, scrape_service, scrape_services
from tests.support.gateway import Gateway, closed_upstream, gateway
from tests.support.procs import free_port, wait_until
from tests.support.scrape_fixtures import err, ok, scrape

pytestmark = pytest.mark.integration


# A service allowing only 127.0.0.1, so the canary on 127.0.0.3 is outside the allow-list.
STRICT = {
    "SCRAPE_ALLOW_CIDRS": "127.0.0.1/32",
    "SCRAPE_BROWSER_PATH": "",
    "SCRAPE_STATIC_HOSTS": "rebind.test=127.0.0.3",
}


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """`svc` and `strict`, started at once (their imports overlap)."""
    # No browser here, so escalation paths are decided without one (the browser file covers them).
    plain = {"SCRAPE_BROWSER_PATH": ""}
    with scrape_services(tmp_path_factory.mktemp("svc"), plain, STRICT) as urls:
        yield urls


@pytest.fixture(scope="module")
def svc(services: list[str]) -> str:
    return services[0]


def test_health_lists_engines(svc: str) -> None:
    health = httpx.get(f"{svc}/health", timeout=10).json()
    assert health["status"] == "ok"
    assert health["engines"] == {"fetcher": True, "browser": False, "stealthy": False}


def test_article_main_content_as_markdown(svc: str, web: str) -> None:
    r = ok(scrape(svc, url=f"{web}/article"))
    assert (r.status, r.engine, r.escalated_from, r.format) == (200, "fetcher", None, "markdown")
    assert r.url == f"{web}/article"
    assert r.title == fw.ARTICLE_TITLE
    assert fw.ARTICLE_SENTINEL in r.content
    assert "## Why the gearing matters" in r.content
    assert f"({web}/guides/setting)" in r.content  # links made absolute
    for boilerplate in ("Accept all cookies", "All rights reserved", "Ten best barometers"):
        assert boilerplate not in r.content
    assert not r.truncated and r.elapsed_ms > 0


def test_whole_page_and_other_formats(svc: str, web: str) -> None:
    whole = ok(scrape(svc, url=f"{web}/article", main_content=False))
    assert "All rights reserved" in whole.content and fw.ARTICLE_SENTINEL in whole.content
    text = ok(scrape(svc, url=f"{web}/article", format="text"))
    assert fw.ARTICLE_SENTINEL in text.content and "](" not in text.content
    html = ok(scrape(svc, url=f"{web}/article", format="html"))
    assert "<p>" in html.content and "<script" not in html.content


def test_code_blocks_verbatim_and_tables(svc: str, web: str) -> None:
    r = ok(scrape(svc, url=f"{web}/code"))
    assert fw.CODE_SNIPPET.rstrip("\n") in r.content
    assert fw.SHELL_SNIPPET in r.content  # <, >, & and quotes neither escaped nor reflowed
    assert "```" in r.content
    assert "| Brest | 04:12 | 6.1 |" in r.content.replace("  ", " ")


def test_max_length_truncates_on_characters(svc: str, web: str) -> None:
    r = ok(scrape(svc, url=f"{web}/charset/sjis", max_length=5))
    assert r.truncated and r.content == fw.CHARSET_TEXT["sjis"][1][:5]


@pytest.mark.parametrize("name", ["utf8", "latin1", "sjis", "sjis-meta"])
def test_charsets(svc: str, web: str, name: str) -> None:
    r = ok(scrape(svc, url=f"{web}/charset/{name}"))
    assert fw.CHARSET_TEXT[name][1] in r.content


@pytest.mark.parametrize("code", [404, 410])
def test_missing_pages_are_pages_and_never_escalate(svc: str, web: str, code: int) -> None:
    r = ok(scrape(svc, url=f"{web}/status/{code}"))
    assert (r.status, r.engine, r.escalated_from) == (code, "fetcher", None)
    assert f"answered {code}" in r.content


def test_retry_after_is_honoured_within_the_budget(svc: str, web: str) -> None:
    r = ok(scrape(svc, url=f"{web}/retry/api-test"))
    assert (r.status, r.engine) == (200, "fetcher")
    assert r.elapsed_ms >= 900  # it waited the announced second
    assert httpx.get(f"{web}/hits", params={"path": "/retry/api-test"}).json()["hits"] == 2


def test_blocking_status_without_a_browser_returns_the_page(svc: str, web: str) -> None:
    r = ok(scrape(svc, url=f"{web}/status/403"))
    assert (r.status, r.engine, r.escalated_from) == (403, "fetcher", None)


def test_challenge_without_a_browser_is_engine_unavailable(svc: str, web: str) -> None:
    body = err(scrape(svc, url=f"{web}/challenge-hard"), 503, "ENGINE_UNAVAILABLE")
    assert "browser" in body.message


def test_render_without_a_browser_is_engine_unavailable(svc: str, web: str) -> None:
    err(scrape(svc, url=f"{web}/article", render=True), 503, "ENGINE_UNAVAILABLE")


def test_passthrough_and_unsupported_types(svc: str, web: str) -> None:
    assert '"high_water": "04:12"' in ok(scrape(svc, url=f"{web}/json")).content
    assert ok(scrape(svc, url=f"{web}/plain")).content.startswith("High water at Brest")
    err(scrape(svc, url=f"{web}/pdf"), 422, "EMPTY_CONTENT")  # a PDF with no pages
    err(scrape(svc, url=f"{web}/image"), 415, "UNSUPPORTED_CONTENT")
    err(scrape(svc, url=f"{web}/empty"), 422, "EMPTY_CONTENT")


def test_size_limit(svc: str, web: str) -> None:
    err(scrape(svc, url=f"{web}/huge?mb=12"), 413, "TOO_LARGE")
    err(scrape(svc, url=f"{web}/huge-declared?mb=12"), 413, "TOO_LARGE")


def test_time_budget(svc: str, web: str) -> None:
    resp = scrape(svc, url=f"{web}/slow?s=6", timeout_s=1.5)
    body = err(resp, 504, "TIMEOUT")
    assert body.retryable
    assert resp.elapsed.total_seconds() < 5


def test_unreachable_site_is_fetch_failed(svc: str) -> None:
    err(scrape(svc, url=f"http://127.0.0.1:{free_port()}/"), 502, "FETCH_FAILED")


def test_unknown_name_is_fetch_failed_without_dns(svc: str) -> None:
    body = err(scrape(svc, url="http://no-such-host.invalid/"), 502, "FETCH_FAILED")
    assert not body.retryable


SSRF_URLS = [
    "http://localhost/",
    "http://localhost./",
    "http://127.1/",
    "http://2130706433/",
    "http://0x7f.1/",
    "http://0177.0.0.1/",
    "http://0.0.0.0/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[2002:a9fe:a9fe::]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
    "http://[fe80::1]/",
    "http://[fd00::1]/",
    "http://10.0.0.1/",
    "http://172.16.0.1/",
    "http://192.168.0.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/",
    "http://224.0.0.251/",
    "http://240.0.0.1/",
    "http://255.255.255.255/",
    "http://198.18.0.1/",
    "file:///etc/passwd",
    "ftp://example.org/",
    "gopher://example.org/",
]


@pytest.mark.parametrize("url", SSRF_URLS)
def test_ssrf_targets_are_refused(svc: str, url: str) -> None:
    body = err(scrape(svc, url=url, timeout_s=5), 400, "BLOCKED_URL")
    assert not body.retryable


@pytest.mark.parametrize(
    "target",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/admin",
        "http://[::ffff:a9fe:a9fe]/",
        "http://2852039166/",
        "http://localhost./",
    ],
)
def test_redirect_into_private_addresses_is_refused(svc: str, web: str, target: str) -> None:
    body = err(scrape(svc, url=f"{web}/redirect?to={target}"), 400, "BLOCKED_URL")
    assert body.engine == "fetcher"


@pytest.fixture(scope="module")
def strict(services: list[str]) -> str:
    """The service allowing only 127.0.0.1 (STRICT)."""
    return services[1]


def test_refused_targets_are_never_connected(strict: str, web: str) -> None:
    canary = Canary()
    try:
        err(scrape(strict, url=canary.url), 400, "BLOCKED_URL")
        err(scrape(strict, url=f"http://rebind.test:{canary.port}/"), 400, "BLOCKED_URL")
        err(scrape(strict, url=f"{web}/redirect?to={canary.url}/x"), 400, "BLOCKED_URL")
        hop = f"http://rebind.test:{canary.port}/y"
        err(scrape(strict, url=f"{web}/redirect?to={hop}"), 400, "BLOCKED_URL")
        assert canary.connections == 0
    finally:
        canary.close()


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"url": ""},
        {"url": "http://a/", "timeout_s": 500},
        {"url": "http://a/", "timeout_s": 0},
        {"url": "http://a/", "format": "pdf"},
        {"url": "http://a/", "max_length": 0},
        {"url": "http://a/", "surprise": 1},
        {"url": 42},
        [],
    ],
)
def test_invalid_requests_are_422_without_traces(svc: str, body: Any) -> None:
    resp = httpx.post(f"{svc}/scrape", json=body, timeout=10)
    assert resp.status_code == 422
    assert isinstance(resp.json()["detail"], list)
    assert "Traceback" not in resp.text


def test_non_json_body_is_422(svc: str) -> None:
    resp = httpx.post(f"{svc}/scrape", content=b"{not json", timeout=10)
    assert resp.status_code == 422 and "Traceback" not in resp.text


SATURATION_KEY = "gateway-key-for-saturation-0123"


@pytest.fixture(scope="module")
def saturable(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Gateway]]:
    """A service with one slot and no queue wait, and a gateway in front of it. Each test below
    ends with its slow request done and the slot free again (it asserts so), so both APIs' tests
    share it."""
    env = {"SCRAPE_MAX_CONCURRENCY": "1", "SCRAPE_QUEUE_WAIT_S": "0", "SCRAPE_BROWSER_PATH": ""}
    tmp = tmp_path_factory.mktemp("saturable")
    key = SATURATION_KEY
    with (
        scrape_service(tmp, env) as busy,
        gateway(tmp, api_key=key, llama_upstream=closed_upstream(), scrape_upstream=busy) as gw,
    ):
        yield busy, gw


@pytest.mark.parametrize("api", ["scrape", "firecrawl"])
def test_saturation_is_a_503_with_retry_after_in_each_apis_shape_and_nothing_is_lost(
    saturable: tuple[str, Gateway], web: str, api: str
) -> None:
    """Past `SCRAPE_MAX_CONCURRENCY` (after `SCRAPE_QUEUE_WAIT_S`): 503 + Retry-After at once, in
    the API's own error body, directly and through the gateway (which passes it on untouched);
    the request in flight still completes, and the refused one succeeds when sent again."""
    busy, gw = saturable
    path = "/scrape" if api == "scrape" else "/firecrawl/v1/scrape"
    key = SATURATION_KEY
    with ThreadPoolExecutor(2) as pool:
        slow_path = f"/slow/saturation-{api}"
        slow = pool.submit(
            httpx.post, f"{busy}{path}", json={"url": f"{web}{slow_path}?s=3"}, timeout=30
        )

        def slow_in_flight() -> bool:
            hits = httpx.get(f"{web}/hits", params={"path": slow_path}, timeout=5)
            return bool(hits.json()["hits"] >= 1)

        wait_until(slow_in_flight, 30, "the slow request holds the only slot")
        body = {"url": f"{web}/article"}
        for base, headers in ((busy, {}), (gw.url, {"Authorization": f"Bearer {key}"})):
            resp = httpx.post(f"{base}{path}", json=body, headers=headers, timeout=10)
            assert resp.status_code == 503, resp.text
            assert resp.headers.get("retry-after") == "1"
            if api == "scrape":
                refused = err(resp, 503, "ENGINE_UNAVAILABLE")
                assert refused.retryable and "busy" in refused.message
            else:
                assert resp.json()["success"] is False and "busy" in resp.json()["error"]
        assert slow.result(30).status_code == 200
        again = httpx.post(f"{busy}{path}", json=body, timeout=30)
        assert again.status_code == 200, again.text
