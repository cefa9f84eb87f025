"""Settings of the code tools, env prefix `WORKER_CODEINTEL_` (beside `WorkerSettings`' own).

Read once per process: the pool and the edit hook run outside a tool's `ToolContext`.
"""

from __future__ import annotations

from functools import cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class CodeIntelSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="WORKER_CODEINTEL_", extra="ignore")

    # Post-edit diagnostics: off switch, total wait per edit (before + after), how many to show.
    edit_diagnostics: bool = True
    edit_wait_s: float = Field(default=8.0, ge=0)
    edit_max_errors: int = Field(default=10, ge=1)
    # Lsp tool requests (the tool's own timeout caps it further).
    request_timeout_s: float = Field(default=30.0, gt=0)
    # A server unused this long is stopped (started again on the next use).
    idle_stop_s: float = Field(default=1800.0, gt=0)
    # At most this many servers per process (each is a node or native process of 100+ MB); the
    # least recently used one is stopped to make room.
    max_servers: int = Field(default=4, ge=1)
    # Workspace-wide diagnostics (basedpyright CLI over every file).
    check_timeout_s: float = Field(default=120.0, gt=0)


@cache
def codeintel_settings() -> CodeIntelSettings:
    return CodeIntelSettings()
