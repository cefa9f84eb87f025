"""Configuration of the key service and its admin commands: one pydantic-settings class, `KEYS_`."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class KeysSettings(BaseSettings):
    """`KEYS_<NAME>` in the environment sets each; compose's defaults are the container paths."""

    model_config = SettingsConfigDict(env_prefix="KEYS_", env_file=None, extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8090, ge=1, le=65535)
    # the key store and the gateway snippets made from it (a volume the worker never mounts)
    dir: Path = Path("/keys")
    # the gateway's access records (read only here)
    usage_dir: Path = Path("/var/log/openmono")
