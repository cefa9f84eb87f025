"""The `fetcher` engine in-process against the fixture site: pinning, redirect hops, limits."""

from __future__ import annotations

from pathlib import Path

import pytest
from openmono_contracts import NetGuard
from openmono_scrape.engines import fetcher
from openmono_scrape.errors import BlockedURL, FetchFailed, FetchTimeout, TooLarge
from openmono_scrape.page import Budget

from tests.support.fixture_web import Canary

pytestmark = pytest.mark.integration


def only(names: dict[str, str]) -> NetGuard:
    """A guard allowing 127.0.0.1 only, whose DNS is this dict (no query leaves the machine)."""

    async def resolve(host: str, port: int) -> list[str]:
        if host not in names:
            raise OSError("unknown")
        return [names[host]]

    return NetGuard(["127.0.0.1/32"], resolver=resolve)


async def get(url: str, guard: NetGuard, max_bytes: int = 5_000_000, budget: float = 20):
    return await fetcher.fetch(url, guard, Budget(budget), max_bytes=max_bytes, max_redirects=5)


async def test_connects_to_the_checked_address_without_a_second_lookup(web: str) -> None:
    # "pinned.invalid" exists only in the guard's resolver: curl can reach it only through the pin.
    port = web.rsplit(":", 1)[1]
    page = await get(f"http://pinned.invalid:{port}/article", only({"pinned.invalid": "127.0.0.1"}))
    assert page.status == 200
    assert page.url == f"http://pinned.invalid:{port}/article"
    assert b"Tide clocks" in page.body


async def test_each_hop_is_checked_before_connecting(web: str, canary: Canary) -> None:
    guard = only({})
    for target in (canary.url + "/", f"http://rebind.invalid:{canary.port}/"):
        names = {"rebind.invalid": canary.host}
        with pytest.raises(BlockedURL):
            await get(f"{web}/redirect?to={target}", only(names) if "rebind" in target else guard)
    with pytest.raises(BlockedURL):
        await get(f"{web}/redirect?to=http://169.254.169.254/latest/meta-data/", guard)
    with pytest.raises(BlockedURL):
        await get(f"{web}/redirect?to=http://10.0.0.1/", guard)
    assert canary.connections == 0


async def test_redirect_chain_and_its_limit(web: str) -> None:
    page = await get(f"{web}/chain/3", only({}))
    assert page.url == f"{web}/article"
    with pytest.raises(FetchFailed, match="redirects"):
        await get(f"{web}/chain/9", only({}))


async def test_body_limits(web: str) -> None:
    with pytest.raises(TooLarge):
        await get(f"{web}/huge?mb=8", only({}), max_bytes=1_000_000)
    with pytest.raises(TooLarge):
        await get(f"{web}/huge-declared?mb=8", only({}), max_bytes=1_000_000)


async def test_budget_bounds_a_slow_site(web: str) -> None:
    budget = Budget(1.0)
    with pytest.raises(FetchTimeout):
        await fetcher.fetch(
            f"{web}/slow?s=4", only({}), budget, max_bytes=1_000_000, max_redirects=5
        )
    assert budget.elapsed_ms() < 3000


async def test_connection_refused_is_fetch_failed(tmp_path: Path) -> None:
    from tests.support.procs import free_port

    with pytest.raises(FetchFailed):
        await get(f"http://127.0.0.1:{free_port()}/", only({}))
