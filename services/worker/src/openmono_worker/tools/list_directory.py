"""ListDirectory: the entries of a directory, optionally recursive, bounded by `max_entries`.

Directories end with `/`, symlinks show their target (`name -> target`, never followed). Entries are
sorted by name, hidden ones included. A recursive listing does not descend into VCS, dependency and
cache directories (`.git`, `node_modules`, `.venv`, `__pycache__`, ...); they are listed, marked.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from openmono_worker.errors import ToolError
from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome

NOT_EXPANDED = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".tox",
    }
)


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(
        default=None, description="Directory to list (default: the workspace root)."
    )
    recursive: bool = Field(default=False, description="Also list subdirectories' contents.")
    max_entries: int = Field(
        default=200, ge=1, le=5000, description="Stop after this many entries."
    )


def _entries(directory: Path, prefix: str, recursive: bool) -> Iterator[str]:
    try:
        items = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError as exc:
        yield f"{prefix}[cannot list: {exc.strerror}]"
        return
    for entry in items:
        name = prefix + entry.name
        if entry.is_symlink():
            try:
                target = str(Path(entry.path).readlink())
            except OSError:
                target = "?"
            yield f"{name} -> {target}"
        elif entry.is_dir(follow_symlinks=False):
            if recursive and entry.name in NOT_EXPANDED:
                yield f"{name}/ (not expanded)"
                continue
            yield f"{name}/"
            if recursive:
                yield from _entries(Path(entry.path), f"{name}/", recursive)
        else:
            yield name


class ListDirectory(Tool[Params]):
    name = "ListDirectory"
    description = (
        "List a directory's entries (directories end with '/'). recursive=true lists the whole "
        "tree below it, up to max_entries."
    )
    read_only = True
    concurrency_safe = True
    path_params = ("path",)
    core = True
    kind = "read"
    params_model = Params

    def execute(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        root = ctx.resolve(params.path or ".", read=True)
        shown = ctx.show(root)
        if not root.exists():
            raise ToolError(f"no such directory: {params.path}")
        if not root.is_dir():
            raise ToolError(f"{shown} is a file, not a directory; use FileRead")
        lines: list[str] = []
        more = False
        for line in _entries(root, "", params.recursive):
            ctx.check_cancelled()
            if len(lines) == params.max_entries:
                more = True
                break
            lines.append(line)
        if not lines:
            return ToolOutcome(f"{shown}/ is empty")
        header = f"{shown}/"
        if more:
            lines.append(
                f"[stopped at max_entries={params.max_entries}; list a subdirectory or raise it]"
            )
        return ToolOutcome("\n".join([header, *lines]), truncated=more)


TOOL = ListDirectory()
