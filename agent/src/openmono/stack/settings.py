"""Settings of the native stack: the same names as `compose/.env`, overridable from the environment.

Precedence: process environment > `compose/.env` of the project > defaults. Two stacks can run side
by
side by giving them other ports and another `OPENMONO_DATA_DIR`.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from openmono.stack.errors import StackError

TRUTHY = frozenset({"1", "true", "yes", "on"})


def find_project_root(start: Path | None = None) -> Path:
    """The checkout holding `caddy/Caddyfile`: `OPENMONO_ROOT`, else the cwd or a parent of it."""
    env = os.environ.get("OPENMONO_ROOT")
    if env:
        root = Path(env).expanduser().resolve()
        if (root / "caddy" / "Caddyfile").is_file():
            return root
        raise StackError(f"OPENMONO_ROOT={env} holds no caddy/Caddyfile")
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "caddy" / "Caddyfile").is_file():
            return folder
    raise StackError(
        "the native stack runs from an OpenMono checkout: cd into it or set OPENMONO_ROOT "
        "(no caddy/Caddyfile found here or above)"
    )


class StackSettings(BaseSettings):
    """Ports, upstreams, secrets and switches of the native stack (DESIGN.md §9)."""

    model_config = SettingsConfigDict(extra="ignore", case_sensitive=False)

    gateway_port: int = Field(default=47480, ge=1, le=65535)
    # HTTPS listener (Caddy's internal CA unless GATEWAY_TLS_MODE says otherwise): what frpc tunnels
    gateway_tls_port: int = Field(default=47443, ge=1, le=65535)
    gateway_tls_mode: str = "internal"
    gateway_tls_domain: str = ""
    gateway_tls_cert: str = ""
    gateway_tls_key: str = ""
    llama_port: int = Field(default=7474, ge=1, le=65535)
    scrape_port: int = Field(default=5000, ge=1, le=65535)
    redis_port: int = Field(default=6379, ge=1, le=65535)
    llama_api_key: SecretStr = SecretStr("")
    # the key llama-server itself checks; the gateway swaps it in (stack/tls.py says why)
    llama_upstream_key: SecretStr = SecretStr("")
    # comma-separated host:port (or http://host:port) lists: several upstreams behind the gateway
    llama_upstream: str = ""
    # host:port=key,...: the key of each LLAMA_UPSTREAM on another box that checks its own
    llama_upstream_keys: SecretStr = SecretStr("")
    llama_model: str = ""
    # 8192: SmolLM2 is trained for it, and the full tool catalogue needs ~2,900 tokens of it
    llama_ctx_size: int = Field(default=8192, ge=256)
    llama_parallel: int = Field(default=1, ge=1)
    searxng_upstream: str = ""
    scrape_upstream: str = ""
    # on by default: /services still says false for a service that does not answer
    web_search_enabled: str = "true"
    web_scrape_enabled: str = "true"
    scrape_allow_cidrs: str = ""
    openmono_broker_url: str = ""
    openmono_data_dir: Path = Path("~/.openmono")

    @property
    def data_dir(self) -> Path:
        return self.openmono_data_dir.expanduser()

    @property
    def stack_dir(self) -> Path:
        return self.data_dir / "stack"

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
            out[name.upper()] = str(value)
        return out

    @property
    def search_enabled(self) -> bool:
        return self.web_search_enabled.strip().lower() in TRUTHY

    @property
    def scrape_enabled(self) -> bool:
        return self.web_scrape_enabled.strip().lower() in TRUTHY


def env_file_path(root: Path) -> Path:
    """The stack's `.env`: `OPENMONO_ENV_FILE` if set, else `<root>/compose/.env`."""
    override = os.environ.get("OPENMONO_ENV_FILE")
    return Path(override).expanduser() if override else root / "compose" / ".env"


def load_settings(root: Path) -> StackSettings:
    """Settings from the environment, then the stack's `.env` (if present)."""
    env_file = env_file_path(root)
    return StackSettings(_env_file=env_file if env_file.is_file() else None)
