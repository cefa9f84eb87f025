"""What an engine hands back (`FetchedPage`) and the per-request time budget (`Budget`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from openmono_contracts import ScrapeEngine

from openmono_scrape.errors import FetchTimeout

if TYPE_CHECKING:
    from openmono_scrape.engines.interact import Interaction


@dataclass
class FetchedPage:
    """A response an engine received: final URL after redirects, status, headers, raw body."""

    url: str
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes
    engine: ScrapeEngine
    # Set when the browser rendered the page: its DOM after scripts ran, already text.
    rendered_html: str | None = None
    # Set when the browser ran a plan (Firecrawl actions, screenshot); never cached.
    interaction: Interaction | None = None

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").partition(";")[0].strip().lower()

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


@dataclass
class Budget:
    """The total time a request may take, shared by every engine and every hop it uses."""

    total_s: float
    started: float = field(default_factory=time.monotonic)

    @property
    def deadline(self) -> float:
        return self.started + self.total_s

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def require(self, url: str | None = None, engine: ScrapeEngine | None = None) -> float:
        """The seconds left, or `FetchTimeout` when none are."""
        left = self.remaining()
        if left <= 0.05:
            raise FetchTimeout(
                f"the time budget of {self.total_s:g}s ran out", url=url, engine=engine
            )
        return left

    def elapsed_ms(self) -> float:
        return (time.monotonic() - self.started) * 1000.0
