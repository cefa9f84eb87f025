"""Worker settings: one pydantic-settings class, env prefix `WORKER_`; the data dir is shared.

The data dir is read from `WORKER_DATA_DIR`, else `OPENMONO_DATA_DIR` (the variable the whole stack
shares, DESIGN.md §9), else `~/.openmono`. Artifacts default to `<data dir>/artifacts`, background
Bash logs to `<data dir>/bash`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class WorkerSettings(BaseSettings):
    """Limits and locations used by every tool call in this process."""

    model_config = SettingsConfigDict(env_prefix="WORKER_", extra="ignore", populate_by_name=True)

    data_dir: Path = Field(
        default=Path("~/.openmono"),
        validation_alias=AliasChoices("WORKER_DATA_DIR", "OPENMONO_DATA_DIR", "data_dir"),
    )
    artifact_dir: Path | None = None
    # Outputs above this many bytes go to an artifact file; the model gets a head and the path.
    artifact_threshold_bytes: int = Field(default=10 * 1024, ge=1024)
    artifact_head_bytes: int = Field(default=4 * 1024, ge=256)
    artifact_tail_bytes: int = Field(default=2 * 1024, ge=0)
    # What a command may print before we stop keeping it (head and tail kept, the middle dropped).
    bash_max_output_bytes: int = Field(default=1024 * 1024, ge=1024)
    # Grep: "auto" uses ripgrep when it is on PATH, else the Python engine; tests force each one.
    grep_engine: Literal["auto", "rg", "python"] = "auto"
    # FileRead refuses files larger than this; use Grep or offset/limit on smaller ones.
    read_max_file_bytes: int = Field(default=20 * 1024 * 1024, ge=1024)

    @field_validator("data_dir", "artifact_dir", mode="after")
    @classmethod
    def _expand(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None

    @property
    def artifacts_root(self) -> Path:
        """Where `<session_id>/<call_id>.txt` artifact files are written."""
        return self.artifact_dir if self.artifact_dir is not None else self.data_dir / "artifacts"

    @property
    def bash_log_dir(self) -> Path:
        """Where background commands write their combined output."""
        return self.data_dir / "bash"
