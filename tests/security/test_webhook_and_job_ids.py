"""Finding 13: webhook URLs were checked only at delivery, and another key's job id answered 409.

A crawl or batch scrape whose webhook pointed at the metadata address, a private network or a
non-HTTP scheme was accepted (200 and a job id); only each delivery was refused, so the job ran
and could never report. And a job id was the same to every key: another key read the job's
status and results, and a DELETE of a finished job of someone else's answered 409, telling it
apart from one that never existed.

Through the real gateway (the operator's key and two box keys, the real key service) and the real
scrape service: a refused webhook is a 400 in Firecrawl's shape before any job exists, and no
connection reaches the refused address (a loopback canary the guard does not allow); the jobs of
one key are 404 to every other key, on status, errors and cancel, a forged `X-OpenMono-Key`
header changing nothing. Private targets are only named, never contacted: the guard refuses them
before any connection, and the service resolves no name through DNS here.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.crawl_site import CrawlSite, crawl_site
from tests.support.crawl_stack import CrawlStack, crawl_stack
from tests.support.fixture_web import Canary

pytestmark = pytest.mark.integration

KEY = "webhook-ids-key-4b8d"
ANNA, BEN = "laptop-anna", "laptop-ben"
REFUSED_HOOKS = (
    "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.1/hook",
    "http://192.168.1.1:8080/hook",
    "http://172.16.0.1/hook",
    "http://[::ffff:10.0.0.1]/hook",
    "http://0x7f.1/hook",
    "http://localhost/hook",
    "http://hooks.example.invalid/hook",  # unresolvable: no DNS here, and no guess
    "ftp://127.0.0.1/hook",
    "file:///etc/passwd",
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CrawlSite]:
    with crawl_site(tmp_path_factory.mktemp("site")) as s:
        yield s


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CrawlStack]:
    tmp = tmp_path_factory.mktemp("ids")
    with crawl_stack(tmp, KEY, durable=False, box_keys=[ANNA, BEN]) as s:
        yield s


def _call(
    stack: CrawlStack, method: str, path: str, who: str, body: Any = None, **headers: str
) -> httpx.Response:
    return httpx.request(
        method,
        f"{stack.gateway.url}/firecrawl{path}",
        json=body,
        headers={**stack.auth(who), **headers},
        timeout=30,
    )


def _bodies(site: CrawlSite, hook: Any) -> dict[str, dict[str, Any]]:
    return {
        "/v2/crawl": {"url": site.url, "limit": 3, "webhook": hook},
        "/v1/crawl": {"url": site.url, "limit": 3, "webhook": hook},
        "/v2/batch/scrape": {"urls": [f"{site.url}/docs/1"], "webhook": hook},
    }


@pytest.mark.parametrize("hook", REFUSED_HOOKS)
def test_a_refused_webhook_is_a_400_before_the_job_exists(
    stack: CrawlStack, site: CrawlSite, hook: str
) -> None:
    for path, body in _bodies(site, hook).items():
        for form in (hook, {"url": hook, "events": ["completed"]}):
            r = _call(stack, "POST", path, ANNA, {**body, "webhook": form})
            assert r.status_code == 400, (path, r.text)
            got = r.json()
            assert got["success"] is False and "id" not in got
            assert got["error"].startswith("Bad Request: webhook.url: "), got


def test_a_webhook_to_a_loopback_address_outside_the_allow_list_is_never_contacted(
    stack: CrawlStack, site: CrawlSite, canary: Canary
) -> None:
    for path, body in _bodies(site, f"{canary.url}/hook").items():
        r = _call(stack, "POST", path, ANNA, body)
        assert r.status_code == 400 and "webhook.url" in r.json()["error"], r.text
    assert canary.connections == 0


def test_a_job_of_another_key_is_404_on_status_errors_and_cancel(
    stack: CrawlStack, site: CrawlSite
) -> None:
    crawl = _call(stack, "POST", "/v2/crawl", ANNA, {"url": site.url, "delay": 30})
    batch = _call(stack, "POST", "/v1/batch/scrape", ANNA, {"urls": [f"{site.url}/docs/1"]})
    assert crawl.status_code == 200 and batch.status_code == 200, (crawl.text, batch.text)
    jobs = {f"/v2/crawl/{crawl.json()['id']}", f"/v1/batch/scrape/{batch.json()['id']}"}
    not_found = {"success": False, "error": "Job not found"}
    for job in jobs:
        assert _call(stack, "GET", job, ANNA).status_code == 200
        for other in (BEN, "operator"):
            for method, path in (("GET", job), ("GET", f"{job}/errors"), ("DELETE", job)):
                r = _call(stack, method, path, other)
                assert (r.status_code, r.json()) == (404, not_found), (other, method, path)
                # the gateway sets the header itself: claiming to be anna changes nothing
                forged = _call(stack, method, path, other, **{"X-OpenMono-Key": ANNA})
                assert (forged.status_code, forged.json()) == (404, not_found)
    # a job id asked for under the other kind's path is not found either
    assert _call(stack, "GET", f"/v2/batch/scrape/{crawl.json()['id']}", ANNA).status_code == 404
    crawl_path = f"/v2/crawl/{crawl.json()['id']}"
    assert _call(stack, "DELETE", crawl_path, ANNA).status_code == 200
    assert _call(stack, "GET", crawl_path, ANNA).json()["status"] == "cancelled"
    # ended: its own key is told so (409), another key still sees nothing there (404)
    batch_path = f"/v1/batch/scrape/{batch.json()['id']}"
    deadline = time.monotonic() + 30
    while _call(stack, "GET", batch_path, ANNA).json()["status"] == "scraping":
        assert time.monotonic() < deadline, "the batch of one page did not complete"
        time.sleep(0.2)
    assert _call(stack, "DELETE", batch_path, ANNA).status_code == 409
    assert _call(stack, "DELETE", batch_path, BEN).status_code == 404


def test_a_job_made_with_a_forged_key_header_belongs_to_the_key_that_made_it(
    stack: CrawlStack, site: CrawlSite
) -> None:
    r = _call(
        stack, "POST", "/v2/crawl", BEN, {"url": site.url, "delay": 30}, **{"X-OpenMono-Key": ANNA}
    )
    assert r.status_code == 200, r.text
    path = f"/v2/crawl/{r.json()['id']}"
    assert _call(stack, "GET", path, ANNA).status_code == 404
    assert _call(stack, "DELETE", path, BEN).status_code == 200
