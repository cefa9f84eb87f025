"""Positions between the model and the server: 1-based code points vs LSP's 0-based UTF-16 units.

The model counts characters as editors show them; LSP (by default) counts UTF-16 code units, which
differ only past the Basic Multilingual Plane (emoji and the like). Lines are read from the file.
"""

from __future__ import annotations

from pathlib import Path


def to_utf16(line_text: str, column: int) -> int:
    """0-based code-point column -> 0-based UTF-16 offset in `line_text`."""
    prefix = line_text[:column]
    return column + sum(1 for ch in prefix if ord(ch) > 0xFFFF)


def from_utf16(line_text: str, offset: int) -> int:
    """0-based UTF-16 offset -> 0-based code-point column in `line_text`."""
    units = 0
    for i, ch in enumerate(line_text):
        if units >= offset:
            return i
        units += 2 if ord(ch) > 0xFFFF else 1
    return len(line_text)


class Lines:
    """The lines of files, read once per tool call (for positions and for showing source)."""

    def __init__(self) -> None:
        self._cache: dict[Path, list[str]] = {}

    def of(self, path: Path) -> list[str]:
        if path not in self._cache:
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            self._cache[path] = text.splitlines()
        return self._cache[path]

    def line(self, path: Path, index: int) -> str:
        lines = self.of(path)
        return lines[index] if 0 <= index < len(lines) else ""
