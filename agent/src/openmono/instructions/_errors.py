"""The one exception base of `openmono.instructions` and what hangs off it.

InstructionsError
 └── FrontMatterError   a file's front matter cannot be read: names the file and the line
"""

from __future__ import annotations

from pathlib import Path

from openmono.errors import OpenMonoError


class InstructionsError(OpenMonoError):
    """A notes, rule, skill, agent or command file that cannot be used; the message says why."""


class FrontMatterError(InstructionsError):
    """Front matter that is neither YAML nor the `key: value` lines other agents write."""

    def __init__(self, file: Path, line: int, problem: str) -> None:
        self.file = file
        self.line = line
        self.problem = problem
        super().__init__(f"{file}:{line}: malformed front matter: {problem}")
