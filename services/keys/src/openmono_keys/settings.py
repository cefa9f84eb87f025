"""Configuration of the key service and its admin commands: one pydantic-settings class, `KEYS_`."""

from __future__ import annotations

from pathlib import Path

from openmono_contracts.facts import GATEWAY_SECRET_ENV
from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class KeysSettings(BaseSettings):
    """`KEYS_<NAME>` in the environment sets each; compose's defaults are the container paths."""

    model_config = SettingsConfigDict(env_prefix="KEYS_", env_file=None, extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8090, ge=1, le=65535)
    # the key store and the gateway snippets made from it (a volume the worker never mounts)
    dir: Path = Path("/keys")
    # the gateway's access records (read here) and the tap's token records (written here)
    usage_dir: Path = Path("/var/log/openmono")
    # the token tap (openmono_keys.tap): the gateway's forward proxy for LLM requests; 0 = off
    tap_port: int = Field(default=0, ge=0, le=65535)
    # the replicas it may dial: host:port entries (or http://host:port), commas or blanks
    # between; names are resolved
    tap_upstreams: str = ""
    tap_roll_bytes: int = Field(default=10 * 1024 * 1024, ge=4096)
    tap_keep: int = Field(default=10, ge=1)
    # the gateway's own secret (openmono_keys.secret): GATEWAY_SECRET, the env file's, as Caddy
    # reads it; `serve` refuses to start without one
    gateway_secret: SecretStr = Field(
        default=SecretStr(""),
        validation_alias=AliasChoices(GATEWAY_SECRET_ENV, "KEYS_GATEWAY_SECRET", "gateway_secret"),
    )

    def tap_upstream_list(self) -> list[str]:
        parts = self.tap_upstreams.replace(",", " ").split()
        return [part.removeprefix("http://").rstrip("/") for part in parts]
