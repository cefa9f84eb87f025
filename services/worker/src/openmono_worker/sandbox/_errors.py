"""The sandbox's error: a call that must run confined could not be."""

from __future__ import annotations

from openmono_contracts import ToolErrorKind

from openmono_worker.errors import ToolError


class SandboxUnavailable(ToolError):
    """No sandbox can be made here (old kernel, Landlock off, unknown machine); the message says
    why and what the call needs instead."""

    kind: ToolErrorKind = "unavailable"

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"this call must run in the sandbox, and this worker cannot make one: {reason}. "
            "It was not run. Ask the user to approve the command (it then runs unconfined), or "
            "see `openmono doctor`."
        )
        self.reason = reason
