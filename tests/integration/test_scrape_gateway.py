"""The scrape service behind the real Caddy gateway: auth enforced, bodies and codes untouched."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.support import fixture_web as fw
from tests.support.fixture_web import scrape_service
from tests.support.gateway import Gateway, closed_upstream, gateway

pytestmark = pytest.mark.integration

KEY = "scrape-gateway-test-key"


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    tmp = tmp_path_factory.mktemp("gw")
    with (
        scrape_service(tmp, {"SCRAPE_BROWSER_PATH": ""}) as svc,
        gateway(
            tmp,
            api_key=KEY,
            llama_upstream=closed_upstream(),
            scrape_upstream=svc.removeprefix("http://"),
            scrape_enabled="true",
        ) as g,
    ):
        yield g


def test_bearer_is_required(gw: Gateway, web: str) -> None:
    resp = httpx.post(f"{gw.url}/scrape", json={"url": f"{web}/article"}, timeout=30)
    assert resp.status_code == 401
    assert resp.json() == {"error": "unauthorized"}


def test_scrape_through_the_gateway(gw: Gateway, web: str) -> None:
    resp = httpx.post(
        f"{gw.url}/scrape", json={"url": f"{web}/article"}, headers=gw.auth, timeout=60
    )
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["engine"] == "fetcher" and fw.ARTICLE_SENTINEL in body["content"]


def test_error_codes_and_bodies_pass_through(gw: Gateway, web: str) -> None:
    blocked = httpx.post(
        f"{gw.url}/scrape",
        json={"url": f"{web}/redirect?to=http://169.254.169.254/"},
        headers=gw.auth,
        timeout=60,
    )
    assert blocked.status_code == 400 and blocked.json()["error"] == "BLOCKED_URL"
    invalid = httpx.post(f"{gw.url}/scrape", json={"url": ""}, headers=gw.auth, timeout=60)
    assert invalid.status_code == 422 and "detail" in invalid.json()
    services = httpx.get(f"{gw.url}/services", timeout=10).json()
    assert services["scrape"] is True
