"""FileRead: a text file with line numbers (cat -n style), from `offset` for `limit` lines.

The output is kept under the artifact threshold on purpose: instead of spilling a long file to an
artifact, FileRead stops at the byte budget and says which `offset` continues, so the model reads
files page by page. Binary files (a NUL byte in the first 8 KB) and files above the size cap are
refused with a message that says what to use instead. Lines longer than 2000 characters are cut.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from openmono_worker.errors import ToolError
from openmono_worker.formatting import READ_DEFAULT_LIMIT, read_page
from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome
from openmono_worker.tools._text import SNIFF_BYTES, looks_binary

DEFAULT_LIMIT = READ_DEFAULT_LIMIT


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(
        min_length=1,
        description="File to read: absolute (inside the workspace) or relative to the workspace.",
    )
    offset: int | None = Field(
        default=None, ge=1, description="1-based line number to start from (default 1)."
    )
    limit: int | None = Field(
        default=None, ge=1, description=f"Maximum number of lines (default {DEFAULT_LIMIT})."
    )


class FileRead(Tool[Params]):
    name = "FileRead"
    description = (
        "Read a text file from the workspace. Returns lines prefixed with their line numbers "
        "(cat -n style). Use offset/limit to page through long files."
    )
    read_only = True
    concurrency_safe = True
    path_params = ("file_path",)
    core = True
    kind = "read"
    params_model = Params

    def execute(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        path = ctx.resolve(params.file_path, read=True)
        shown = ctx.show(path)
        if path.is_dir():
            raise ToolError(f"{shown} is a directory; use ListDirectory")
        if not path.is_file():
            raise ToolError(f"file not found: {shown}")
        size = path.stat().st_size
        if size > ctx.settings.read_max_file_bytes:
            raise ToolError(
                f"{shown} is {size} bytes, over the {ctx.settings.read_max_file_bytes}-byte limit "
                "of FileRead; search it with Grep instead"
            )
        data = path.read_bytes()
        if looks_binary(data[:SNIFF_BYTES]):
            raise ToolError(f"{shown} is a binary file ({size} bytes); not shown")
        if not data:
            return ToolOutcome(f"({shown} is empty)")
        lines = data.decode("utf-8", errors="replace").splitlines()
        start = params.offset or 1
        if start > len(lines):
            raise ToolError(f"offset {start} is past the end of {shown} ({len(lines)} lines)")
        stop = min(len(lines), start - 1 + (params.limit or DEFAULT_LIMIT))
        budget = ctx.settings.artifact_threshold_bytes - 300
        body, last = read_page(
            lines[start - 1 : stop], start, shown, total=len(lines), budget=budget
        )
        return ToolOutcome(body, truncated=last < stop)


TOOL = FileRead()
