"""What the native stack hands the scrape service: its SearXNG for Firecrawl search, and the
broker's Redis (database 1) for the scrape cache, only when the stack runs them."""

from __future__ import annotations

from pathlib import Path

import pytest
from openmono.stack.services import SCRAPE
from openmono.stack.settings import StackSettings
from openmono.stack.spec import Context


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENMONO_BROKER_URL", "SEARXNG_UPSTREAM", "WEB_SEARCH_ENABLED", "REDIS_PORT"):
        monkeypatch.delenv(name, raising=False)


def _env(tmp_path: Path, **settings: object) -> dict[str, str]:
    ctx = Context(tmp_path, StackSettings(openmono_data_dir=tmp_path / "data", **settings))
    return SCRAPE.env(ctx)


def test_nothing_extra_without_searxng_or_broker(tmp_path: Path) -> None:
    env = _env(tmp_path)
    assert "SCRAPE_SEARXNG_URL" not in env and "SCRAPE_CACHE_REDIS_URL" not in env


def test_searxng_and_the_brokers_redis(tmp_path: Path) -> None:
    env = _env(
        tmp_path,
        searxng_upstream="127.0.0.1:8888",
        openmono_broker_url="redis://127.0.0.1:6390/0",
        scrape_allow_cidrs="127.0.0.0/8",
    )
    assert env["SCRAPE_SEARXNG_URL"] == "http://127.0.0.1:8888"
    assert env["SCRAPE_CACHE_REDIS_URL"] == "redis://127.0.0.1:6390/1"
    assert env["SCRAPE_ALLOW_CIDRS"] == "127.0.0.0/8"


def test_search_switched_off_gives_no_searxng(tmp_path: Path) -> None:
    env = _env(tmp_path, searxng_upstream="http://127.0.0.1:8888/", web_search_enabled="false")
    assert "SCRAPE_SEARXNG_URL" not in env
