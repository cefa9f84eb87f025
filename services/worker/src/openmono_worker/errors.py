"""The one exception base of the worker package.

    WorkerError
     └── ToolError          a tool call failed in a way the model can act on (ok=False result)
          ├── PathRefused   a path escapes the workspace, or is malformed (NUL, `~`, symlink loop)
          └── CallCancelled the executor asked the call to stop (the tool stops at its next check)

`run_tool` turns every `ToolError` into `ToolResult(ok=False, error=str(exc), error_kind=exc.kind)`;
nothing escapes it.
"""

from __future__ import annotations

from openmono_contracts import ToolErrorKind


class WorkerError(Exception):
    """Base of every error raised by `openmono_worker`."""


class ToolError(WorkerError):
    """A tool could not do what was asked; the message is written for the model, `kind` says
    why for whoever reads results without parsing messages."""

    kind: ToolErrorKind = "failed"


class PathRefused(ToolError):
    """A path is outside the workspace (after resolving symlinks) or is not a usable path."""

    kind: ToolErrorKind = "denied"

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"path refused: {path!r}: {reason}")
        self.path = path
        self.reason = reason


class CallCancelled(ToolError):
    """The executor cancelled the call; any process it started is already dead."""

    kind: ToolErrorKind = "cancelled"

    def __init__(self) -> None:
        super().__init__("cancelled")
