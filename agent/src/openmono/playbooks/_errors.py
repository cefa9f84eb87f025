"""The one exception base of `openmono.playbooks` and what hangs off it.

PlaybookError
 ├── PlaybookInvalid      a PLAYBOOK.md (or a file it names) is malformed: file, field, step
 │    └── ParameterError  a run's parameter values do not fit the declared parameters
 ├── PlaybookNotFound     no playbook by that name in any source
 ├── TemplateError        a {{...}} placeholder cannot be rendered (unknown key, shell failed)
 ├── GateUnavailable      a gate needs a person and the run is non-interactive (no --yes)
 ├── ResumeError          --resume with no checkpoint, or one that does not fit the playbook
 └── ValueInvalid         a value does not fit what was declared (a parameter, a structured
                          answer); also a ValueError, so pydantic validators may raise it
"""

from __future__ import annotations

from pathlib import Path

from openmono.errors import OpenMonoError


class PlaybookError(OpenMonoError):
    """Anything that stops a playbook from loading or running; the message is for people."""


class PlaybookInvalid(PlaybookError):
    """A malformed playbook; `str()` names the file, the field and (when there is one) the step."""

    def __init__(
        self, file: Path | str, field: str, message: str, *, step: str | None = None
    ) -> None:
        self.file = Path(file)
        self.field = field
        self.step = step
        self.message = message
        where = f"step {step!r}: " if step else ""
        super().__init__(f"{self.file}: {where}field {field!r}: {message}")


class ParameterError(PlaybookInvalid):
    """A parameter value given for a run is missing, of the wrong type or out of range."""


class PlaybookNotFound(PlaybookError):
    """No playbook of that name in the project, the user's data dir or the shipped ones."""


class TemplateError(PlaybookError):
    """A placeholder cannot be rendered; an unknown key is an error, never an empty string."""


class GateUnavailable(PlaybookError):
    """A gate needs an answer and nobody can give one (a non-interactive run without --yes)."""


class ResumeError(PlaybookError):
    """Nothing to resume, or the checkpoint belongs to another playbook or version."""


class ValueInvalid(PlaybookError, ValueError):
    """A value that does not fit what was declared; the message says why, briefly."""
