"""Settings of the web tools: one pydantic-settings class, env prefix `WORKER_WEB_`.

The explicit switches keep the names the agent documents (`OPENMONO_WEB_SEARCH`,
`OPENMONO_WEB_SCRAPE`): the agent resolves them into `ToolRequest.web`, and the worker reads them
too when a request leaves a switch unset (a worker started with the switch in its environment).
Everything else lives under `WORKER_WEB_` on purpose: the agent's settings own `OPENMONO_WEB_*`
and would refuse a key they do not know.
"""

from __future__ import annotations

import os
from functools import lru_cache

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from openmono_worker.web._switch import parse_switch

DDG_HTML_URL = "https://html.duckduckgo.com/html/"


class WebToolSettings(BaseSettings):
    """Timeouts, caches and fallback targets of WebSearch / WebFetch."""

    model_config = SettingsConfigDict(env_prefix="WORKER_WEB_", extra="ignore")

    search: bool | None = Field(
        default=None, validation_alias=AliasChoices("OPENMONO_WEB_SEARCH", "WORKER_WEB_SEARCH")
    )
    scrape: bool | None = Field(
        default=None, validation_alias=AliasChoices("OPENMONO_WEB_SCRAPE", "WORKER_WEB_SCRAPE")
    )
    # DESIGN.md §6: the probe waits 5 s; the gateway paths 15 s (search) and 90 s (scrape).
    probe_timeout_s: float = Field(default=5.0, gt=0)
    search_timeout_s: float = Field(default=15.0, gt=0)
    scrape_timeout_s: float = Field(default=90.0, gt=0)
    # A good probe is reused for a while; a failed one only briefly, so a gateway that comes
    # back is noticed without restarting the agent.
    probe_ttl_s: float = Field(default=60.0, ge=0)
    probe_failure_ttl_s: float = Field(default=5.0, ge=0)
    # The fallback search endpoint (tests point it at a local fake).
    ddg_url: str = DDG_HTML_URL
    ddg_timeout_s: float = Field(default=15.0, gt=0)
    # Direct fetch (the fallback of WebFetch): limits and the SSRF allow-list (tests: 127.0.0.0/8).
    fetch_timeout_s: float = Field(default=30.0, gt=0)
    fetch_max_bytes: int = Field(default=5 * 1024 * 1024, ge=1024)
    fetch_max_redirects: int = Field(default=5, ge=0, le=20)
    fetch_allow_cidrs: str = ""
    user_agent: str = (
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/131.0 Safari/537.36 OpenMono"
    )

    @field_validator("search", "scrape", mode="before")
    @classmethod
    def _switch(cls, value: object) -> bool | None:
        return parse_switch(value)

    @property
    def allow_cidrs(self) -> list[str]:
        return [c.strip() for c in self.fetch_allow_cidrs.split(",") if c.strip()]


@lru_cache(maxsize=8)
def _cached(_env: tuple[tuple[str, str], ...]) -> WebToolSettings:
    return WebToolSettings()


def current_settings() -> WebToolSettings:
    """The settings for this call: re-read only when a variable they depend on changed.

    Parsing pydantic-settings costs a few milliseconds per call; the environment of a worker
    rarely changes, but tests and long-lived agents may change it between calls.
    """
    relevant = tuple(
        sorted(
            (k, v)
            for k, v in os.environ.items()
            if k.startswith(("WORKER_WEB_", "OPENMONO_WEB_SEARCH", "OPENMONO_WEB_SCRAPE"))
        )
    )
    return _cached(relevant)
