"""The two Grep engines: ripgrep (`rg --json`) when installed, a Python walk otherwise.

Both return the same `Line` records in the same order (files by path, lines by number), so the Grep
tool formats them identically. Known differences: ripgrep's regex dialect is Rust's (the common
subset is the same as Python's `re`), and ripgrep also honours ignore files above the workspace.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmono_worker.errors import ToolError
from openmono_worker.tools._base import ToolContext
from openmono_worker.tools._globs import glob_match
from openmono_worker.tools._process import run_command
from openmono_worker.tools._text import SNIFF_BYTES, looks_binary
from openmono_worker.tools._walk import Override, walk_files

# rg's JSON for a broad search can be big; what is past this is cut (Grep shows far fewer lines).
_RG_MAX_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Line:
    path: str
    number: int
    text: str
    match: bool


@dataclass(frozen=True)
class Query:
    pattern: str
    target: Path  # resolved file or directory
    shown: str  # how `target` is displayed ("." for the workspace root)
    glob: str | None
    case_insensitive: bool
    context: int
    max_results: int


def rg_path() -> str | None:
    """The ripgrep binary, if one is on PATH."""
    return shutil.which("rg")


def _text(obj: dict[str, Any]) -> str:
    if "text" in obj:
        return str(obj["text"])
    return base64.b64decode(obj.get("bytes", "")).decode("utf-8", errors="replace")


def search_rg(rg: str, q: Query, ctx: ToolContext) -> list[Line]:
    argv = [rg, "--json", "--sort", "path", "--no-config", "--no-require-git"]
    if q.case_insensitive:
        argv.append("--ignore-case")
    if q.context:
        argv += ["--context", str(q.context)]
    if q.glob:
        argv += ["--glob", q.glob]
    argv += ["--regexp", q.pattern, "--"]
    if q.shown != ".":
        argv.append(q.shown)
    done = run_command(
        argv,
        cwd=ctx.workspace,
        timeout_s=ctx.timeout_s,
        cancel=ctx.cancel,
        max_bytes=_RG_MAX_BYTES,
        merge_stderr=False,
    )
    if done.cancelled:
        raise ToolError("cancelled")
    if done.timed_out:
        raise ToolError(f"search timed out after {ctx.timeout_s:g} s; narrow the path or glob")
    stderr = done.stderr.text().strip() if done.stderr is not None else ""
    if done.exit_code == 2 and "regex" in stderr.lower():
        raise ToolError(f"invalid regex: {stderr}")
    lines: list[Line] = []
    matches = 0
    for raw in done.stdout.text().splitlines():
        try:
            event = json.loads(raw)
        except ValueError:
            continue  # a line cut by the output cap
        kind = event.get("type")
        if kind not in ("match", "context"):
            continue
        data = event["data"]
        text = _text(data["lines"]).rstrip("\n").rstrip("\r")
        lines.append(Line(_text(data["path"]), int(data["line_number"]), text, kind == "match"))
        matches += kind == "match"
        if matches > q.max_results + 1:
            break
    if not lines and done.exit_code not in (0, 1):
        raise ToolError(f"ripgrep failed (exit {done.exit_code}): {stderr or 'no message'}")
    return lines


def _glob_override(glob: str | None) -> Override | None:
    """ripgrep's `--glob`: a match includes a file even if hidden or ignored; `!glob` excludes."""
    if not glob:
        return None
    if glob.startswith("!"):
        negated = glob[1:]
        return lambda rel: False if glob_match(negated, rel) else None
    return lambda rel: glob_match(glob, rel)


def search_python(q: Query, ctx: ToolContext) -> list[Line]:
    flags = re.IGNORECASE if q.case_insensitive else 0
    try:
        regex = re.compile(q.pattern, flags)
    except re.error as exc:
        raise ToolError(f"invalid regex: {exc}") from exc
    if q.target.is_file():
        files = [q.target]
    else:
        files = list(walk_files(q.target, ctx.workspace, override=_glob_override(q.glob)))
    lines: list[Line] = []
    matches = 0
    for path in files:
        ctx.check_cancelled()
        shown = ctx.show(path)
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if looks_binary(data[:SNIFF_BYTES]) or b"\x00" in data:
            continue
        text = data.decode("utf-8", errors="replace").split("\n")
        if text and text[-1] == "":
            text.pop()
        found = [i for i, line in enumerate(text) if regex.search(line.rstrip("\r"))]
        if not found:
            continue
        keep: dict[int, bool] = {}
        for i in found:
            for j in range(max(0, i - q.context), min(len(text), i + q.context + 1)):
                keep.setdefault(j, False)
            keep[i] = True
        for i in sorted(keep):
            lines.append(Line(shown, i + 1, text[i].rstrip("\r"), keep[i]))
        matches += len(found)
        if matches > q.max_results + 1:
            break
    return lines
