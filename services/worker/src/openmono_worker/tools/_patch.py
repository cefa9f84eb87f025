"""Unified diff: parse (git and plain `diff -u` output) and apply hunks to text, in memory.

Lenient where models are sloppy and strict where it matters: hunk line counts are honoured when
the lines are there but a hunk may end early; a hunk is looked for at its stated line first, then
at the nearest position either way, then ignoring trailing whitespace; a hunk that matches nowhere
fails the whole patch. Code fences around the patch are ignored. Lines are compared without their
line ending, so a CRLF file takes an LF patch (new lines get the file's ending).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from openmono_worker.errors import ToolError

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
DEV_NULL = "/dev/null"


@dataclass
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    # (tag, text) with tag in " -+"; text without line ending.
    lines: list[tuple[str, str]] = field(default_factory=list)
    new_no_eol: bool = False

    @property
    def old_lines(self) -> list[str]:
        return [t for tag, t in self.lines if tag in " -"]

    @property
    def new_lines(self) -> list[str]:
        return [t for tag, t in self.lines if tag in " +"]


@dataclass
class FilePatch:
    old_path: str | None  # None: the file is created
    new_path: str | None  # None: the file is deleted
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or "?"

    def counts(self) -> tuple[int, int]:
        added = sum(1 for h in self.hunks for tag, _ in h.lines if tag == "+")
        removed = sum(1 for h in self.hunks for tag, _ in h.lines if tag == "-")
        return added, removed


def _header_path(raw: str) -> str | None:
    name = raw.split("\t", 1)[0].strip()
    if name.startswith('"') and name.endswith('"') and len(name) >= 2:
        name = name[1:-1]
    if name == DEV_NULL:
        return None
    return name


def _strip_prefixes(fp: FilePatch) -> None:
    # git's a/ b/ prefixes: strip them when both sides carry them (or the one side that exists).
    sides = [p for p in (fp.old_path, fp.new_path) if p is not None]
    if sides and all(p.startswith(("a/", "b/")) for p in sides):
        if fp.old_path is not None:
            fp.old_path = fp.old_path[2:]
        if fp.new_path is not None:
            fp.new_path = fp.new_path[2:]


def _is_file_header(lines: list[str], i: int) -> bool:
    return lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")


def parse_patch(text: str) -> list[FilePatch]:
    """All file patches in `text`; raises `ToolError` when it is not a usable unified diff."""
    lines = text.replace("\r\n", "\n").split("\n")
    lines = [ln for ln in lines if not ln.startswith("```")]
    patches: list[FilePatch] = []
    current: FilePatch | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if _is_file_header(lines, i):
            current = FilePatch(_header_path(line[4:]), _header_path(lines[i + 1][4:]))
            _strip_prefixes(current)
            if current.old_path is None and current.new_path is None:
                raise ToolError(f"line {i + 1}: both sides of a file header are /dev/null")
            patches.append(current)
            i += 2
            continue
        match = _HUNK.match(line)
        if match:
            if current is None:
                raise ToolError(f"line {i + 1}: hunk before any '--- a/file' / '+++ b/file' header")
            hunk = Hunk(
                int(match[1]),
                int(match[2]) if match[2] is not None else 1,
                int(match[3]),
                int(match[4]) if match[4] is not None else 1,
            )
            i = _read_hunk(lines, i + 1, hunk)
            current.hunks.append(hunk)
            continue
        i += 1  # `diff --git`, `index ...`, mode lines, commentary: not needed to apply
    if not patches:
        raise ToolError("no file headers found: expected a unified diff ('--- a/x', '+++ b/x', @@)")
    for fp in patches:
        if not fp.hunks and fp.old_path is not None and fp.new_path is not None:
            raise ToolError(f"{fp.path}: file header without any hunk")
    return patches


def _read_hunk(lines: list[str], i: int, hunk: Hunk) -> int:
    old_left, new_left = hunk.old_len, hunk.new_len
    while i < len(lines) and (old_left > 0 or new_left > 0):
        line = lines[i]
        if _HUNK.match(line) or _is_file_header(lines, i) or line.startswith("diff --git "):
            break
        if line.startswith("\\"):
            i += 1
            continue
        tag, body = (line[0], line[1:]) if line else (" ", "")
        if tag not in " -+":
            break
        hunk.lines.append((tag, body))
        if tag in " -":
            old_left -= 1
        if tag in " +":
            new_left -= 1
        i += 1
    # A "\ No newline at end of file" right after the hunk's last new-side line.
    if i < len(lines) and lines[i].startswith("\\"):
        if hunk.lines and hunk.lines[-1][0] in " +":
            hunk.new_no_eol = True
        i += 1
    return i


def _find(haystack: list[str], needle: list[str], expected: int, start: int) -> int | None:
    """Index where `needle` matches, nearest to `expected`, not before `start`."""
    if not needle:
        return max(start, min(expected, len(haystack)))
    last = len(haystack) - len(needle)
    for loose in (False, True):
        want = [_norm(s, loose) for s in needle]
        for distance in range(max(last, expected) + 1):
            for pos in (expected - distance, expected + distance):
                if not start <= pos <= last:
                    continue
                if [_norm(s, loose) for s in haystack[pos : pos + len(want)]] == want:
                    return pos
    return None


def _norm(line: str, loose: bool) -> str:
    return line.rstrip() if loose else line


def apply_hunks(original: str, fp: FilePatch) -> tuple[str, list[str]]:
    """The patched text and notes about hunks that applied away from their stated line."""
    eol = "\r\n" if "\r\n" in original else "\n"
    had_eol = original == "" or original.endswith("\n")
    src = original.split("\n")
    if src and src[-1] == "":
        src.pop()
    src = [s[:-1] if s.endswith("\r") else s for s in src]
    out: list[str] = []
    notes: list[str] = []
    pos = 0
    ends_at_eof = False
    no_eol = False
    for n, hunk in enumerate(fp.hunks, start=1):
        expected = hunk.old_start - 1 if hunk.old_len > 0 else hunk.old_start
        at = _find(src, hunk.old_lines, max(expected, 0), pos)
        if at is None:
            first = next((t for t in hunk.old_lines if t.strip()), "")
            raise ToolError(
                f"{fp.path}: hunk {n} (@@ -{hunk.old_start},{hunk.old_len}) does not match the "
                f"file; its first line {first!r} was not found where expected. Read the file "
                "again and regenerate the patch"
            )
        if at != expected and hunk.old_len > 0:
            notes.append(
                f"{fp.path}: hunk {n} applied at line {at + 1} (patch said {expected + 1})"
            )
        out.extend(src[pos:at])
        k = at
        for tag, text in hunk.lines:
            if tag == "+":
                out.append(text)
                continue
            if tag == " ":
                out.append(src[k])  # the file's own line: a loose match keeps its whitespace
            k += 1
        pos = k
        ends_at_eof = pos >= len(src)
        no_eol = hunk.new_no_eol
    out.extend(src[pos:])
    if not out:
        return "", notes
    text = eol.join(out)
    if ends_at_eof:
        return (text if no_eol else text + eol), notes
    return (text + eol if had_eol else text), notes
