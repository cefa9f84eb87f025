"""Errors of `openmono keys`, under the agent's one root."""

from __future__ import annotations

from openmono.errors import OpenMonoError


class KeysCommandError(OpenMonoError):
    """A key command failed; `mistake` is True for the caller's mistake (exit code 2)."""

    def __init__(self, message: str, *, mistake: bool = False) -> None:
        super().__init__(message)
        self.mistake = mistake
