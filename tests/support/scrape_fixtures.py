"""Shared fixtures and calls for the scrape service's tests (registered in tests/conftest.py).

`web` is the local fixture site (one process per test module), `canary` a listener that counts
connections it must never receive; `scrape`, `ok` and `err` call the service and check the contract.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from openmono_contracts import ScrapeErrorBody, ScrapeResponse

from tests.support.fixture_web import Canary, fixture_web


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with fixture_web(tmp_path_factory.mktemp("web")) as url:
        yield url


@pytest.fixture
def canary() -> Iterator[Canary]:
    c = Canary()
    yield c
    c.close()


def scrape(svc: str, **body: Any) -> httpx.Response:
    return httpx.post(f"{svc}/scrape", json=body, timeout=130)


def ok(resp: httpx.Response) -> ScrapeResponse:
    assert resp.status_code == 200, resp.text
    return ScrapeResponse.model_validate(resp.json())


def err(resp: httpx.Response, status: int, code: str) -> ScrapeErrorBody:
    """An error answer with the contract's body, never a stack trace."""
    assert resp.status_code == status, resp.text
    body = ScrapeErrorBody.model_validate(resp.json())
    assert body.error == code
    assert "Traceback" not in resp.text
    return body
