"""The `stealthy` engine: Camoufox (a patched Firefox), used only where it is installed.

Scrapling 0.5 dropped Camoufox, and the `camoufox` package pins Playwright below the version
`scrapling[fetchers]` needs, so this image does not ship it; where an operator installs both the
package and its browser (`camoufox fetch`), `available` turns true and the engine runs with the
same context-level SSRF route as the Chromium engine. Elsewhere a request that needs it gets
`ENGINE_UNAVAILABLE` and `GET /health` says `stealthy: false`.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
from typing import Any

from openmono_contracts import NetGuard

from openmono_scrape.engines._guardroute import GuardRoute, NavState, nav_failure
from openmono_scrape.errors import EngineUnavailable, FetchTimeout
from openmono_scrape.page import Budget, FetchedPage
from openmono_scrape.settings import ScrapeSettings


def camoufox_installed() -> bool:
    """The package imports and its browser build has been fetched."""
    if importlib.util.find_spec("camoufox") is None:
        return False
    try:
        pkgman = importlib.import_module("camoufox.pkgman")
        return bool(pkgman.installed_verstr())
    except Exception:
        return False


class StealthyEngine:
    """One Camoufox browser per fetch (Camoufox draws a new identity on every launch)."""

    name = "stealthy"

    def __init__(self, settings: ScrapeSettings, guard: NetGuard) -> None:
        self.settings = settings
        self.route = GuardRoute(guard, settings.max_download_bytes, settings.max_redirects)
        self.available = camoufox_installed()

    async def fetch(self, url: str, budget: Budget) -> FetchedPage:
        if not self.available:
            raise EngineUnavailable(
                "the page needs the stealthy engine (Camoufox), which is not installed here",
                url=url,
                engine="stealthy",
            )
        left = budget.require(url, "stealthy")
        api: Any = importlib.import_module("camoufox.async_api")
        state = NavState(
            budget.deadline, self.settings.max_download_bytes, self.settings.max_redirects
        )
        try:
            async with api.AsyncCamoufox(headless=True) as browser:
                context = await browser.new_context(service_workers="block")
                await self.route.install(context)
                page = await context.new_page()
                self.route.states[page] = state
                await asyncio.wait_for(page.goto(url, timeout=left * 1000), left)
                html = await page.content()
        except TimeoutError as exc:
            raise FetchTimeout("the page did not load in time", url=url, engine="stealthy") from exc
        except Exception as exc:
            raise nav_failure(state, url, exc, "stealthy") from exc
        if state.blocked or state.too_large or state.status is None:
            raise nav_failure(state, url, None, "stealthy")
        return FetchedPage(
            url=state.final_url or url,
            status=state.status,
            headers=dict(state.headers),
            body=html.encode("utf-8"),
            engine="stealthy",
            rendered_html=html,
        )
