"""What a tool is: a typed `Params` model, its facts, and `execute(params, ctx) -> ToolOutcome`.

A tool module defines `class Params(BaseModel)` (the JSON schema the model sees is derived from it),
a `Tool` subclass, and a module-level `TOOL` instance; the registry finds it by that name, so a new
tool is one new module. Tools raise `ToolError` for failures the model can act on; `run_tool` turns
those into `ok=False` results, and writes big outputs to artifacts, so tools never deal with either.
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from openmono_contracts import ToolErrorKind, WebAccess
from openmono_contracts.sandbox import SandboxPolicy
from openmono_contracts.toolfacts import DeclaresFacts, params_schema
from pydantic import BaseModel

from openmono_worker.errors import CallCancelled
from openmono_worker.settings import WorkerSettings
from openmono_worker.workspace import display_path, names_path, resolve_path

P = TypeVar("P", bound=BaseModel)


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool hands back; `run_tool` adds call id, timing and the artifact handling."""

    output: str
    ok: bool = True
    error: str | None = None
    truncated: bool = False
    # why `ok=False` (None: `failed`); see `openmono_contracts.ToolErrorKind`
    error_kind: ToolErrorKind | None = None
    # A file the call wrote for the model to read later (a background command's log): the agent
    # lets read-only tools read it like the artifact a big output spills into.
    artifact: str | None = None


@dataclass(frozen=True)
class ToolContext:
    """Everything a tool may use besides its parameters: where, who, how long, and a cancel flag."""

    workspace: Path
    call_id: str
    session_id: str
    timeout_s: float
    settings: WorkerSettings
    cancel: threading.Event = field(default_factory=threading.Event)
    web: WebAccess = field(default_factory=WebAccess)
    # folders the agent let this call read besides the workspace (`ToolRequest.read_roots`)
    extra_read: tuple[str, ...] = ()
    # the user trusted the workspace: what runs its code (some language servers) may start
    trusted: bool = False
    # The sandbox the request asks for (only shell tools accept one: `runner` checks).
    sandbox: SandboxPolicy | None = None
    # the files the session read or wrote, as named (`ToolRequest.known_files`; None: unchecked)
    known_files: tuple[str, ...] | None = None

    def resolve(self, path: str, *, read: bool = False) -> Path:
        """A workspace path; reads may also reach artifact files and background command logs."""
        extra = self.read_roots() if read else ()
        return resolve_path(self.workspace, path, extra_roots=extra)

    def show(self, path: Path) -> str:
        """A path as the model should see it (relative to the workspace)."""
        return display_path(path, self.workspace)

    def read_roots(self) -> tuple[Path, ...]:
        """Directories outside the workspace that read-only tools may read: the ones our own
        outputs were written to (artifacts, background logs) and the request's read roots (a
        loaded skill's folder), resolved (they may not exist yet)."""
        extra = tuple(Path(d) for d in self.extra_read if Path(d).is_absolute())
        dirs: tuple[Path, ...] = (self.settings.artifacts_root, self.settings.bash_log_dir, *extra)
        return tuple(Path(os.path.realpath(d)) for d in dirs)

    def knows(self, path: Path) -> bool:
        """Whether the session read or wrote `path` (a resolved path) before this call; True when
        the caller keeps no record. A name that no longer resolves (gone, or outside) counts as
        not that file."""
        return self.known_files is None or names_path(self.workspace, self.known_files, path)

    def check_cancelled(self) -> None:
        """Raise `CallCancelled` if the executor asked us to stop."""
        if self.cancel.is_set():
            raise CallCancelled


class Tool(DeclaresFacts, ABC, Generic[P]):
    """Base of every tool. Subclasses set the class attributes and implement `execute`.

    Besides name, description and `params_model`, a tool declares its facts (`read_only`,
    `path_params`, `writes`, `core`, `kind`, ...: see `openmono_contracts.toolfacts`) as class
    attributes; the agent reads them from `spec()["facts"]` instead of lists of names.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    params_model: type[P]

    @abstractmethod
    def execute(self, params: P, ctx: ToolContext) -> ToolOutcome:
        """Do the work; raise `ToolError` for failures the model can act on."""

    def parse(self, raw: dict[str, Any]) -> P:
        """Validate raw JSON arguments (raises pydantic's `ValidationError`)."""
        return self.params_model.model_validate(raw)

    def run(self, raw: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        return self.execute(self.parse(raw), ctx)

    def spec(self) -> dict[str, Any]:
        """The tool as the agent advertises it to the model, plus the flags the loop needs."""
        schema = params_schema(self.params_model)
        return {
            "name": self.name,
            "description": self.description,
            "parameters": schema,
            "facts": self.facts().model_dump(mode="json"),
        }
