"""Configuration of the scrape service: one pydantic-settings class, env prefix `SCRAPE_`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from openmono_contracts.facts import LOOPBACK, REDIS_PASSWORD_ENV, SCRAPE_PORT
from openmono_contracts.redisauth import with_password
from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

_DEBIAN_CHROMIUM = Path("/usr/bin/chromium")

# Chromium flags that work on these machines (no GPU, no network but loopback): QUIC and
# background networking are off so the browser only talks through the guarded routes. The sandbox
# is not a flag here: `browser_sandbox` (engines/_launch.py).
DEFAULT_BROWSER_FLAGS = (
    "--headless",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def _default_browser() -> str | None:
    return str(_DEBIAN_CHROMIUM) if _DEBIAN_CHROMIUM.exists() else None


class ScrapeSettings(BaseSettings):
    """Every knob of the service; `SCRAPE_<NAME>` in the environment (or `.env`) sets it."""

    model_config = SettingsConfigDict(env_prefix="SCRAPE_", env_file=None, extra="ignore")

    host: str = LOOPBACK
    port: int = Field(default=SCRAPE_PORT, ge=1, le=65535)
    # CIDRs that pass the SSRF guard although they are not public, comma separated
    # (tests: 127.0.0.0/8; a private deployment: its LAN). Empty = public addresses only.
    allow_cidrs: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # Names answered without DNS, "name=address" comma separated (air-gapped and private
    # deployments); with `system_dns` off, every other name is unresolvable and no DNS query leaves.
    static_hosts: Annotated[dict[str, str], NoDecode] = Field(default_factory=dict)
    system_dns: bool = True
    max_download_bytes: int = Field(default=10 * 1024 * 1024, ge=1024)
    # PDFs: a file over either limit is TOO_LARGE (413) before any page is read. The download
    # limit applies first. Conversion runs at ~6-90 pages/s here (dense to sparse pages,
    # scrapling/README.md), so 100 dense pages fit the default 60 s budget; past the budget the
    # conversion stops between pages with TIMEOUT.
    pdf_max_bytes: int = Field(default=10 * 1024 * 1024, ge=1024)
    pdf_max_pages: int = Field(default=100, ge=1, le=10_000)
    # What a PDF's compressed streams may inflate to in all (a zip bomb), also TOO_LARGE.
    pdf_max_inflated_bytes: int = Field(default=256 * 1024 * 1024, ge=1024 * 1024)
    max_redirects: int = Field(default=10, ge=0, le=30)
    default_timeout_s: float = Field(default=60.0, gt=0, le=120)
    max_timeout_s: float = Field(default=120.0, gt=0, le=600)
    # Requests handled at once; one more waits up to `queue_wait_s`, then gets 503 + Retry-After.
    max_concurrency: int = Field(default=16, ge=1)
    queue_wait_s: float = Field(default=2.0, ge=0)
    # Browser: path of a Chromium binary (Debian's by default) or the CDP URL of a running one.
    browser_path: str | None = Field(default_factory=_default_browser)
    browser_cdp_url: str | None = None
    browser_flags: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: list(DEFAULT_BROWSER_FLAGS)
    )
    # Chromium's own sandbox (each renderer in its own namespaces under seccomp). Needs
    # unprivileged user namespaces: off only where there are none (a default Docker container,
    # whose image sets it false and runs as a non-root user instead).
    browser_sandbox: bool = True
    # Who Chromium runs as when this service runs as root (Chromium never runs as root):
    # unset = the `openmono-browser` user where `make setup` made it, else `nobody`.
    browser_user: str | None = None
    browser_max_pages: int = Field(default=4, ge=1, le=50)
    # A request waits this long (within its budget) for a free page, then gets 503 + Retry-After.
    browser_queue_wait_s: float = Field(default=10.0, ge=0)
    browser_recycle_pages: int = Field(default=200, ge=1)
    # Wait this long after load for scripts that fill the page late (milliseconds).
    browser_settle_ms: int = Field(default=300, ge=0, le=10_000)
    # Firecrawl `screenshot` and `actions` (engines/interact.py), on the browser only. A viewport
    # past these is refused (400); a full-page shot is cut at the height (with a warning); the
    # screenshots and PDFs of one answer together stay under the bytes (else 413).
    screenshot_max_width: int = Field(default=3840, ge=100, le=7680)
    screenshot_max_height: int = Field(default=2160, ge=100, le=4320)
    screenshot_max_full_page_height: int = Field(default=16384, ge=100, le=32768)
    screenshot_max_bytes: int = Field(default=8 * 1024 * 1024, ge=64 * 1024)
    # Actions in one request (Firecrawl's own limit is 50), and the longest one action may take
    # (within the request's budget): a selector nobody matches fails that action, not the budget.
    actions_max: int = Field(default=50, ge=1, le=50)
    actions_step_timeout_s: float = Field(default=15.0, gt=0, le=120)
    # An `executeJavascript` return value, as JSON, and a `scrape` action's HTML (bytes).
    actions_max_js_return_bytes: int = Field(default=64 * 1024, ge=1024)
    # Longest Retry-After we honour before escalating instead (bounded by the request budget too).
    max_retry_after_s: float = Field(default=5.0, ge=0)
    # Scrape cache (cache.py): its bound in bytes (0 = off) and, where the stack runs one, the
    # Redis that holds it (the native stack and compose use the broker's, database 1).
    cache_max_bytes: int = Field(default=128 * 1024 * 1024, ge=0)
    cache_redis_url: str | None = None
    # Fetches at once to one host (hostlimit.py); more wait for a slot within their budget.
    per_host_concurrency: int = Field(default=4, ge=1, le=64)
    # SearXNG behind the Firecrawl search endpoint (compose: http://searxng:8080); unset = the
    # endpoint answers 503.
    searxng_url: str | None = None
    search_timeout_s: float = Field(default=15.0, gt=0, le=120)
    # Search results scraped at once by one Firecrawl search request.
    search_scrape_concurrency: int = Field(default=5, ge=1, le=20)

    # The box's LLM behind the Firecrawl `json` and `summary` formats (model/): the gateway's base
    # URL (its LLM route; the native stack and compose set it), and the gateway key it sends
    # (LLAMA_API_KEY, the env file's). Unset URL: those formats answer 503.
    llm_url: str | None = None
    llm_api_key: SecretStr = Field(
        default=SecretStr(""),
        validation_alias=AliasChoices("SCRAPE_LLM_API_KEY", "LLAMA_API_KEY", "llm_api_key"),
    )
    # One model call's bound; a request's own `timeout` (ms) bounds the whole scrape instead.
    llm_timeout_s: float = Field(default=120.0, gt=0, le=600)
    # A page longer than this many chunks of the model's context is cut (with a warning).
    llm_max_chunks: int = Field(default=8, ge=1, le=64)
    # The longest answer asked of the model (also bounded by a quarter of its context).
    llm_answer_tokens: int = Field(default=1024, ge=16, le=8192)

    # Crawl and batch scrape jobs (crawl/, crawljobs/). With a Redis URL here (the stack's
    # broker), jobs run in the scrape workers (worker.py) as Celery tasks and their state lives in
    # that Redis: durable across restarts, spread over workers. Unset: jobs run in this process
    # and die with it. The scrape worker reads its broker here too.
    crawl_broker_url: str | None = None
    # The password the stack's Redis requires (REDIS_PASSWORD, the env file's): added to both
    # Redis URLs above when they name none (openmono_contracts.redisauth).
    redis_password: SecretStr = Field(
        default=SecretStr(""),
        validation_alias=AliasChoices(
            REDIS_PASSWORD_ENV, "SCRAPE_REDIS_PASSWORD", "redis_password"
        ),
    )
    # A job, its results and its errors are dropped this long after it started.
    crawl_ttl_s: float = Field(default=24 * 3600.0, ge=60)
    # Bound on one job's stored documents; past it the job stops taking pages. All jobs together
    # (running, and ended ones until they expire) hold at most crawl_max_total_bytes, those of one
    # gateway key at most crawl_max_key_bytes (a job holds what it stored, at least 1 MiB while it
    # runs): a new job past either gets 429, a page past either stops its job. In the stack's
    # Redis this sits beside the scrape cache (128 MiB) under Redis's own 256 MB
    # (docs/operations.md): raise them together.
    crawl_max_bytes: int = Field(default=32 * 1024 * 1024, ge=1024 * 1024)
    crawl_max_total_bytes: int = Field(default=64 * 1024 * 1024, ge=1024 * 1024)
    # The key's name comes from the gateway (X-OpenMono-Key). Half the total by default: one
    # key's crawls never take the room a second key needs.
    crawl_max_key_bytes: int = Field(default=32 * 1024 * 1024, ge=1024 * 1024)
    # Pages in flight at once for one job; a job's `maxConcurrency` can only lower it. Fetches to
    # one host still wait for per_host_concurrency (the pages beyond it are being extracted and
    # recorded meanwhile).
    crawl_concurrency: int = Field(default=8, ge=1, le=64)
    # Driver chains per durable job (spread over workers); a page whose driver stops beating is
    # handed to another after crawl_lease_s.
    crawl_drivers: int = Field(default=2, ge=1, le=16)
    crawl_lease_s: float = Field(default=20.0, ge=1, le=600)
    # Jobs running at once in this process (without a broker), and of those, for one key; more
    # get 429.
    crawl_max_local_jobs: int = Field(default=8, ge=1)
    crawl_max_key_local_jobs: int = Field(default=4, ge=1)
    # The scrape worker (worker.py): slices it runs at once (threads over one event loop, one
    # page pipeline: its admission slots and per-host limit bound the fetches of all of them),
    # and how long a slice drives its job before handing on to the next slice (any worker's).
    crawl_worker_slices: int = Field(default=4, ge=1, le=64)
    crawl_slice_s: float = Field(default=30.0, gt=0, le=3600)

    @field_validator("allow_cidrs", "browser_flags", mode="before")
    @classmethod
    def _split_commas(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("static_hosts", mode="before")
    @classmethod
    def _split_pairs(cls, value: object) -> object:
        if isinstance(value, str):
            pairs = (part.split("=", 1) for part in value.split(",") if "=" in part)
            return {name.strip().lower().rstrip("."): addr.strip() for name, addr in pairs}
        return value

    @field_validator(
        "browser_path",
        "browser_cdp_url",
        "browser_user",
        "cache_redis_url",
        "searxng_url",
        "crawl_broker_url",
        "llm_url",
        mode="before",
    )
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @model_validator(mode="after")
    def _redis_login(self) -> ScrapeSettings:
        password = self.redis_password.get_secret_value()
        if self.cache_redis_url:
            self.cache_redis_url = with_password(self.cache_redis_url, password)
        if self.crawl_broker_url:
            self.crawl_broker_url = with_password(self.crawl_broker_url, password)
        return self
