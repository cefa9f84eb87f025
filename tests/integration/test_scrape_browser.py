"""The `browser` engine (Scrapling StealthyFetcher on Debian's Chromium) in a real service process.

Skipped, with the reason, only where no Chromium is installed. Covers escalation that really ran
a browser (text written by JavaScript), challenge handling, the guard inside the browser (every
request, every document hop, never a connection to a refused address), recycling and shutdown
without leaked processes.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from openmono_scrape.settings import ScrapeSettings

from tests.support import fixture_web as fw
from tests.support.fixture_web import Canary, scrape_service, scrape_services
from tests.support.procs import descendants, free_port, running, wait_until
from tests.support.scrape_fixtures import err, ok, scrape

CHROMIUM = ScrapeSettings().browser_path
pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium)"),
]


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """`svc` and `strict`, started at once (their imports overlap)."""
    strict = {"SCRAPE_ALLOW_CIDRS": "127.0.0.1/32", "SCRAPE_STATIC_HOSTS": "rebind.test=127.0.0.3"}
    with scrape_services(tmp_path_factory.mktemp("svc"), {}, strict) as urls:
        yield urls


@pytest.fixture(scope="module")
def svc(services: list[str]) -> str:
    return services[0]


@pytest.fixture(scope="module")
def strict(services: list[str]) -> str:
    return services[1]


def test_health_says_browser_yes_stealthy_no(svc: str) -> None:
    engines = httpx.get(f"{svc}/health", timeout=10).json()["engines"]
    assert engines == {"fetcher": True, "browser": True, "stealthy": False}


def test_js_shell_escalates_and_the_browser_really_runs_scripts(svc: str, web: str) -> None:
    r = ok(scrape(svc, url=f"{web}/js-only"))
    assert (r.engine, r.escalated_from, r.status) == ("browser", "fetcher", 200)
    assert fw.JS_SENTINEL in r.content


def test_403_escalates_and_keeps_the_site_status(svc: str, web: str) -> None:
    r = ok(scrape(svc, url=f"{web}/forbidden-js"))
    assert (r.engine, r.escalated_from, r.status) == ("browser", "fetcher", 403)
    assert fw.JS_SENTINEL in r.content


def test_503_escalates(svc: str, web: str) -> None:
    r = ok(scrape(svc, url=f"{web}/status/503"))
    assert (r.engine, r.escalated_from, r.status) == ("browser", "fetcher", 503)


def test_challenge_that_a_browser_clears(svc: str, web: str) -> None:
    r = ok(scrape(svc, url=f"{web}/challenge"))
    assert (r.engine, r.escalated_from, r.status) == ("browser", "fetcher", 200)
    assert fw.ARTICLE_SENTINEL in r.content


def test_challenge_that_needs_the_missing_stealthy_engine(svc: str, web: str) -> None:
    body = err(scrape(svc, url=f"{web}/challenge-hard"), 503, "ENGINE_UNAVAILABLE")
    assert "Camoufox" in body.message and body.engine == "stealthy"


def test_render_goes_straight_to_the_browser(svc: str, web: str) -> None:
    r = ok(scrape(svc, url=f"{web}/article", render=True))
    assert (r.engine, r.escalated_from) == ("browser", None)
    assert fw.ARTICLE_SENTINEL in r.content and r.title == fw.ARTICLE_TITLE
    chained = ok(scrape(svc, url=f"{web}/chain/3", render=True))
    assert chained.url == f"{web}/article"


def test_render_respects_limits(svc: str, web: str) -> None:
    err(scrape(svc, url=f"{web}/huge-declared?mb=12", render=True), 413, "TOO_LARGE")
    err(scrape(svc, url=f"{web}/slow?s=8", render=True, timeout_s=2), 504, "TIMEOUT")


@pytest.mark.parametrize(
    "target", ["http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/", "http://0x7f.1/"]
)
def test_render_refuses_redirects_into_private_addresses(svc: str, web: str, target: str) -> None:
    body = err(scrape(svc, url=f"{web}/redirect?to={target}", render=True), 400, "BLOCKED_URL")
    assert body.engine == "browser"


def test_the_browser_never_reaches_a_refused_address(strict: str, web: str) -> None:
    canary = Canary()
    try:
        # Subresources, scripts, frames, fetch() and beacons all aimed at the canary.
        r = ok(scrape(strict, url=f"{web}/embed?to={canary.url}", render=True))
        assert fw.ARTICLE_SENTINEL in r.content
        # A document redirect hop (Playwright's routes do not see hops: the guard follows them).
        err(scrape(strict, url=f"{web}/redirect?to={canary.url}/", render=True), 400, "BLOCKED_URL")
        hop = f"http://rebind.test:{canary.port}/"
        err(scrape(strict, url=f"{web}/redirect?to={hop}", render=True), 400, "BLOCKED_URL")
        # A script navigating the page away.
        scrape(strict, url=f"{web}/navigate?to={canary.url}/nav", render=True)
        assert canary.connections == 0
    finally:
        canary.close()


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _chromium_count(pids: set[int]) -> int:
    n = 0
    for pid in pids:
        try:
            if "chrom" in Path(f"/proc/{pid}/comm").read_text():
                n += 1
        except OSError:
            continue
    return n


def _start_cmd(port: int) -> list[str]:
    return [sys.executable, "-m", "openmono_scrape", "--port", str(port)]


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_recycling_and_no_browser_process_outlives_the_service(
    tmp_path: Path, web: str, how: str
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        "SCRAPE_ALLOW_CIDRS": "127.0.0.0/8",
        "SCRAPE_SYSTEM_DNS": "false",
        "SCRAPE_BROWSER_RECYCLE_PAGES": "2",
        "SCRAPE_BROWSER_MAX_PAGES": "2",
    }
    with running(_start_cmd(port), tmp_path / "svc.log", env=env, ready_url=f"{url}/health") as p:
        counts = []
        for _ in range(3 if how == "SIGTERM" else 1):
            ok(scrape(url, url=f"{web}/article", render=True))
            counts.append(_chromium_count(set(descendants(p.pid))))
        assert counts[0] >= 1, "the browser should run under the service"
        if how == "SIGTERM":
            # Recycled after 2 pages: a second browser was launched, the first one closed.
            wait_until(
                lambda: httpx.get(f"{url}/health", timeout=10).json()["browser_launches"] >= 2,
                30,
                "browser relaunched after recycling",
            )
            assert max(counts) <= counts[0] + 2, counts
        tree = set(descendants(p.pid))
        os.killpg(p.pid, signal.SIGTERM if how == "SIGTERM" else signal.SIGKILL)
        p.popen.wait(30)
    wait_until(lambda: not any(alive(pid) for pid in tree), 30, f"no browser left after {how}")


def test_busy_browser_pages_are_a_503_with_retry_after_and_nothing_is_lost(
    tmp_path: Path, web: str
) -> None:
    """Past `SCRAPE_BROWSER_MAX_PAGES`, a render waits `SCRAPE_BROWSER_QUEUE_WAIT_S` for a page,
    then is refused as busy (not a timeout at the end of its budget); the page in use finishes,
    and the refused render succeeds when sent again."""
    env = {
        "SCRAPE_ALLOW_CIDRS": "127.0.0.0/8",
        "SCRAPE_SYSTEM_DNS": "false",
        "SCRAPE_BROWSER_MAX_PAGES": "1",
        "SCRAPE_BROWSER_QUEUE_WAIT_S": "0.5",
    }
    with scrape_service(tmp_path, env) as url, ThreadPoolExecutor(1) as pool:
        slow = pool.submit(scrape, url, url=f"{web}/slow/browser-busy?s=4", render=True)

        def page_in_use() -> bool:
            hits = httpx.get(f"{web}/hits", params={"path": "/slow/browser-busy"}, timeout=5)
            return bool(hits.json()["hits"] >= 1)

        wait_until(page_in_use, 60, "the slow render holds the only page")
        started = time.monotonic()
        resp = scrape(url, url=f"{web}/article", render=True)
        body = err(resp, 503, "ENGINE_UNAVAILABLE")
        assert time.monotonic() - started < 5  # the queue wait, not the 60 s budget
        assert body.retryable and body.engine == "browser" and "busy" in body.message
        assert resp.headers.get("retry-after") == "2"
        assert ok(slow.result(60)).engine == "browser"
        assert ok(scrape(url, url=f"{web}/article", render=True)).engine == "browser"
