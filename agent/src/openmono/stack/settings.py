"""Settings of the native stack: the same names as `compose/.env`, resolved as every command
resolves them (`openmono.config`): environment > the env file > defaults.

In the env file an empty value is "not set"; a switch (`WEB_SEARCH_ENABLED`,
`WEB_SCRAPE_ENABLED`) that is not set means "on where the service is deployed": search when
`SEARXNG_UPSTREAM` names a SearXNG (the native stack runs none itself), scrape when
`SCRAPE_UPSTREAM` names a scrape service. `WEB_SCRAPE_ENABLED=true` makes the stack start its
own. Two stacks can run side by side by giving them other ports and another `OPENMONO_DATA_DIR`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from openmono_contracts import facts
from openmono_contracts.routed import SCRAPE, SEARCH, RoutedService
from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from openmono.config import ConfigError, current_environ, env_file_of, settings_sources
from openmono.stack.errors import StackError

# Each replica holds the whole model in memory and the cores are shared: past this, a box wants
# another box (LLAMA_UPSTREAM), not more processes.
MAX_REPLICAS = 16


def find_project_root() -> Path:
    """The checkout holding `caddy/Caddyfile` (`OPENMONO_ROOT`, the installed one, or the cwd's)."""
    try:
        return current_environ().require_checkout()
    except ConfigError as exc:
        raise StackError(str(exc)) from exc


def env_file_path(root: Path) -> Path:
    """The stack's `.env`: `OPENMONO_ENV_FILE` if set, else `<root>/compose/.env`."""
    return env_file_of(current_environ().process, root) or root / "compose" / ".env"


class StackSettings(BaseSettings):
    """Ports, upstreams, secrets and switches of the native stack (docs/architecture.md §9)."""

    model_config = SettingsConfigDict(extra="ignore", case_sensitive=False)

    gateway_port: int = Field(default=facts.GATEWAY_PORT, ge=1, le=65535)
    # HTTPS listener (Caddy's internal CA unless GATEWAY_TLS_MODE says otherwise): what frpc tunnels
    gateway_tls_port: int = Field(default=facts.GATEWAY_TLS_PORT, ge=1, le=65535)
    gateway_tls_mode: str = "internal"
    gateway_tls_domain: str = ""
    gateway_tls_cert: str = ""
    gateway_tls_key: str = ""
    llama_port: int = Field(default=facts.LLAMA_PORT, ge=1, le=65535)
    scrape_port: int = Field(default=facts.SCRAPE_PORT, ge=1, le=65535)
    redis_port: int = Field(default=facts.REDIS_PORT, ge=1, le=65535)
    # the key service: rate limits of agent boxes' keys (openmono_keys), on 127.0.0.1
    keys_port: int = Field(default=facts.KEYS_PORT, ge=1, le=65535)
    # the key service's token tap: LLM requests pass through it so usage counts tokens per key
    keys_tap_port: int = Field(default=facts.KEYS_TAP_PORT, ge=1, le=65535)
    gateway_usage_tokens: bool = True
    llama_api_key: SecretStr = SecretStr("")
    # the key llama-server itself checks; the gateway swaps it in (stack/tls.py says why)
    llama_upstream_key: SecretStr = SecretStr("")
    # comma-separated host:port (or http://host:port) lists: several upstreams behind the gateway
    llama_upstream: str = ""
    # host:port=key,...: the key of each LLAMA_UPSTREAM on another box that checks its own
    llama_upstream_keys: SecretStr = SecretStr("")
    llama_model: str = ""
    # a chat template for llama-server: a file in openmono/stack/templates/ or a path; empty = ours
    # for the bundled SmolLM2 (it renders tools), the GGUF's own for any other; `none` = the GGUF's
    llama_chat_template: str = ""
    # 8192: SmolLM2 is trained for it, and the full tool catalogue needs ~2,900 tokens of it
    llama_ctx_size: int = Field(default=8192, ge=256)
    # the router in front of several llama upstreams (stack/router.py; docs/scaling.md, "The
    # router"): its ports, its policy, and its bounded queue (0 = 4 requests per replica slot)
    llm_router_port: int = Field(default=facts.LLM_ROUTER_PORT, ge=1, le=65535)
    llm_router_metrics_port: int = Field(default=facts.LLM_ROUTER_METRICS_PORT, ge=1, le=65535)
    llm_router_policy: Literal["cache_aware", "manual", "round_robin", "power_of_two"] = (
        "cache_aware"
    )
    llm_router_max_concurrent: int = Field(default=0, ge=0)
    llm_router_queue_size: int = Field(default=64, ge=0)
    llm_router_queue_timeout_s: int = Field(default=60, ge=1)
    llm_router_status_port: int = Field(default=facts.LLM_ROUTER_STATUS_PORT, ge=1, le=65535)
    llama_parallel: int = Field(default=1, ge=1)
    # threads of each llama-server; 0: with one replica llama.cpp's own choice, with several the
    # cores split between them (`threads_per_replica`)
    llama_threads: int = Field(default=0, ge=0)
    # llama-server processes the native stack runs of LLAMA_MODEL (not with LLAMA_UPSTREAM): the
    # first on LLAMA_PORT, the others on LLAMA_REPLICA_PORT, +1, ...; more than one: the router
    llama_replicas: int = 1
    llama_replica_port: int = Field(default=facts.LLAMA_REPLICA_PORT, ge=1, le=65535)
    # routed services (openmono_contracts.routed): each one's <PREFIX>_UPSTREAM and its switch
    searxng_upstream: str = ""
    scrape_upstream: str = ""
    # None: on where the service is deployed (the module docstring says what that means here)
    web_search_enabled: bool | None = None
    web_scrape_enabled: bool | None = None
    scrape_allow_cidrs: str = ""
    openmono_broker_url: str = ""
    # the password the broker's Redis requires (generated by `up` / setup; services/redisauth)
    redis_password: SecretStr = SecretStr("")
    # the gateway's own secret, held by Caddy and the key service only (generated by `up` / setup)
    gateway_secret: SecretStr = SecretStr("")
    # the folders whose workspaces the native worker runs calls in (WORKER_ROOTS); empty = home
    worker_roots: str = ""
    # a service that crashes is started again (stack/keeper.py): after this many crashes in a row
    # it is given up; the first wait, doubled on each crash in a row (at most 30 s)
    stack_restart_limit: int = Field(default=5, ge=1)
    stack_restart_backoff_s: float = Field(default=1.0, ge=0.0, le=30.0)
    openmono_data_dir: Path = Path(facts.DEFAULT_DATA_DIR)

    # one per routed service's switch (openmono_contracts.routed; a unit test holds it)
    @field_validator("web_search_enabled", "web_scrape_enabled", mode="before")
    @classmethod
    def _switch(cls, value: Any) -> bool | None:
        return facts.parse_switch(value)

    @field_validator("llama_replicas")
    @classmethod
    def _replicas(cls, value: int) -> int:
        if not 1 <= value <= MAX_REPLICAS:
            raise ValueError(
                f"between 1 and {MAX_REPLICAS} (llama-server processes on this box; each loads "
                "the model into memory again)"
            )
        return value

    @field_validator("gateway_usage_tokens", mode="before")
    @classmethod
    def _on_unless_off(cls, value: Any) -> bool:
        switch = facts.parse_switch(value)
        return True if switch is None else switch

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, *(source for _, source in settings_sources(settings_cls)))

    @property
    def data_dir(self) -> Path:
        return self.openmono_data_dir.expanduser()

    @property
    def stack_dir(self) -> Path:
        return self.data_dir / "stack"

    @property
    def keys_dir(self) -> Path:
        """The store of agent boxes' keys (hashes) and the gateway snippets made from it."""
        return self.stack_dir / "keys"

    @property
    def usage_dir(self) -> Path:
        """The gateway's access records (usage per key), rolled by size."""
        return self.stack_dir / "usage"

    def replica_port(self, replica: int) -> int:
        """The port of local replica `replica` (1-based)."""
        return self.llama_port if replica == 1 else self.llama_replica_port + replica - 2

    @property
    def local_replicas(self) -> int:
        """How many llama-servers the stack runs itself (none with LLAMA_UPSTREAM)."""
        return 0 if self.llama_upstream.strip() else self.llama_replicas

    def threads_per_replica(self, cores: int) -> int:
        """Threads of each local llama-server (0: llama.cpp's own choice). LLAMA_THREADS is per
        replica; unset, one replica keeps llama.cpp's choice and several split the cores evenly
        (at least one each): generation on a CPU is bound by memory bandwidth and cores, so N
        replicas each using every core would only take turns on them."""
        if self.llama_threads or self.local_replicas <= 1:
            return self.llama_threads
        return max(1, cores // self.local_replicas)

    @property
    def broker_port(self) -> int:
        """Redis port: the one in OPENMONO_BROKER_URL when it names one, else REDIS_PORT."""
        port = urlsplit(self.openmono_broker_url).port if self.openmono_broker_url else None
        return port or self.redis_port

    def as_env(self) -> dict[str, str]:
        """Every setting under its `.env` name, for the child processes."""
        out: dict[str, str] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            elif isinstance(value, Path):
                value = value.expanduser()  # children may not expand `~` themselves
            elif isinstance(value, bool):
                value = "true" if value else "false"
            out[name.upper()] = "" if value is None else str(value)
        return out

    def upstream_value(self, service: RoutedService) -> str:
        """What `<PREFIX>_UPSTREAM` holds for a routed service (a host:port list, or "")."""
        return str(getattr(self, service.upstream_env.lower()))

    def switch(self, service: RoutedService) -> bool | None:
        """A routed service's switch as set (None: not set, or the service has none)."""
        if service.switch_env is None:
            return None
        value: bool | None = getattr(self, service.switch_env.lower())
        return value

    def offered(self, service: RoutedService) -> bool:
        """The service is offered: switched on, or not switched and upstreams of it are named
        (a service without a switch always is)."""
        if service.switch_env is None:
            return True
        switch = self.switch(service)
        return switch if switch is not None else bool(self.upstream_value(service).strip())

    @property
    def search_enabled(self) -> bool:
        return self.offered(SEARCH)

    @property
    def scrape_enabled(self) -> bool:
        return self.offered(SCRAPE)


def load_settings(root: Path | None = None) -> StackSettings:
    """The stack's settings, from the environment, then its `.env` (`root` is kept for callers
    that name the checkout; the env file is the one every command reads)."""
    del root
    try:
        return StackSettings()
    except ValidationError as exc:
        raise StackError(_invalid(exc)) from exc


def _invalid(exc: ValidationError) -> str:
    """One line per bad value: its name, the value (unless secret), where it came from, why."""
    environ = current_environ()
    lines = []
    for error in exc.errors():
        name = str(error["loc"][0]).upper() if error["loc"] else "?"
        shown = "********" if name in facts.SECRET_NAMES else repr(error.get("input"))
        why = str(error["msg"]).replace("Input should be", "not").replace("Value error, ", "")
        lines.append(f"{name}={shown} ({environ.origin(name) or 'default'}): {why}")
    where = f" (env file: {environ.file_path})" if environ.file_path else ""
    return "invalid stack settings" + where + ":\n  " + "\n  ".join(lines)
