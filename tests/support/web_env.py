"""The environment of a web-tool test that fetches from loopback servers.

Web search and scrape are left to each test's settings (no `OPENMONO_WEB_*` from the shell), the
worker's fetch guard lets 127.0.0.0/8 through (the test's own origin servers live there; every
other private range stays refused) and the gateway probe cache starts and ends empty.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from openmono_worker.web import clear_probe_cache


def loopback_web_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The body of a module's autouse fixture: `yield from loopback_web_env(monkeypatch)`."""
    for name in ("OPENMONO_WEB_SEARCH", "OPENMONO_WEB_SCRAPE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("WORKER_WEB_FETCH_ALLOW_CIDRS", "127.0.0.0/8")
    clear_probe_cache()
    yield
    clear_probe_cache()
