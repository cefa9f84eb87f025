"""Glob: find files by name pattern (`**/*.py`, `src/**/test_*.{py,ts}`), newest first.

Sorted by modification time, newest first (what you touched last is what you most likely want),
ties by path, so the order is stable. Files only, shown relative to the workspace. The walk is the
one Grep's Python engine uses: hidden and `.gitignore`d entries are skipped, symlinks not followed.
At most 500 paths are listed; the rest are counted.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from openmono_worker.errors import ToolError
from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome
from openmono_worker.tools._globs import glob_match
from openmono_worker.tools._walk import walk_files

MAX_PATHS = 500


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        min_length=1,
        description="Glob relative to path, e.g. '**/*.py', 'src/*.ts', '*.{md,txt}'.",
    )
    path: str | None = Field(
        default=None, description="Directory to search in (default: the workspace root)."
    )


class Glob(Tool[Params]):
    name = "Glob"
    description = (
        "Find files whose path matches a glob pattern (** for any depth). Returns paths "
        "relative to the workspace, most recently modified first."
    )
    read_only = True
    concurrency_safe = True
    path_params = ("path",)
    core = True
    kind = "search"
    params_model = Params

    def execute(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        pattern = params.pattern
        if pattern.startswith("/") or ".." in pattern.split("/"):
            raise ToolError("pattern must be relative to path and must not contain '..'")
        root = ctx.resolve(params.path or ".", read=True)
        if not root.is_dir():
            raise ToolError(f"not a directory: {params.path}")
        # A pattern without '/' matches at any depth, like '**/' in front of it.
        anchored = pattern if "/" in pattern else f"**/{pattern}"
        found: list[tuple[float, str]] = []
        for path in walk_files(root, ctx.workspace):
            ctx.check_cancelled()
            if glob_match(anchored, path.relative_to(root).as_posix()):
                try:
                    mtime = path.stat().st_mtime
                except OSError:
                    continue
                found.append((-mtime, ctx.show(path)))
        shown = ctx.show(root)
        if not found:
            return ToolOutcome(f"No files match {pattern!r} in {shown}")
        found.sort()
        lines = [p for _, p in found[:MAX_PATHS]]
        if len(found) > MAX_PATHS:
            lines.append(
                f"[{len(found)} files match; showing the {MAX_PATHS} newest. Narrow the pattern.]"
            )
        return ToolOutcome("\n".join(lines), truncated=len(found) > MAX_PATHS)


TOOL = Glob()
