"""The run options shared by every surface (one-shot, REPL, ACP), and how they become `Settings`.

They live with the settings, not in the CLI, so the CLI and ACP both use them without importing
each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openmono.config._settings import Mode, Settings


@dataclass
class RunOptions:
    """What the root command's flags say (None = not given, the settings decide)."""

    prompt: str | None = None
    output_format: str = "text"
    allow: tuple[str, ...] = ()
    yolo: bool = False
    mode: Mode | None = None
    resume: str | None = None
    config: Path | None = None
    endpoint: str | None = None
    api_key: str | None = None
    model: str | None = None
    max_iterations: int | None = None
    insecure_http: bool = False
    workspace: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def overrides(self) -> dict[str, Any]:
        return {
            "llm.endpoint": self.endpoint,
            "llm.api_key": self.api_key,
            "llm.model": self.model,
            "max_iterations": self.max_iterations,
            # only when given: the flag can allow plain http, never take a setting's allowance away
            "insecure_http": True if self.insecure_http else None,
            **self.extra,
        }

    def settings(self) -> Settings:
        from openmono.config._load import load_settings

        return load_settings(self.workspace, self.config, self.overrides())

    def workspace_dir(self, settings: Settings) -> Path:
        return (self.workspace or settings.workspace or Path.cwd()).resolve()
