"""FileWrite: create or overwrite a whole file, atomically (temp file + rename, old mode kept).

Parent directories are created. The target is resolved inside the workspace first: writing through
a symlink that stays inside replaces the file it points to, and the link itself is kept. An existing
file is overwritten only when the session has read or written it before (`ToolContext.knows`): a
small model asked to change one line otherwise replaces the whole file with a sentence.
"""

from __future__ import annotations

from openmono_contracts.atomicfile import atomic_write
from pydantic import BaseModel, ConfigDict, Field

from openmono_worker.codeintel import edit_diagnostics
from openmono_worker.errors import ToolError
from openmono_worker.formatting import write_summary
from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(
        min_length=1,
        description="File to write: absolute (inside the workspace) or relative to the workspace.",
    )
    content: str = Field(description="The complete new content of the file.")


class FileWrite(Tool[Params]):
    name = "FileWrite"
    description = (
        "Create a file or overwrite it with the given content (the whole file). Prefer FileEdit "
        "for changes to an existing file."
    )
    path_params = ("file_path",)
    writes = True
    core = True
    kind = "edit"
    params_model = Params

    def execute(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        path = ctx.resolve(params.file_path)
        shown = ctx.show(path)
        if path.is_dir():
            raise ToolError(f"{shown} is a directory")
        if path.exists() and not ctx.knows(path):
            raise ToolError(
                f"{shown} already exists and this session has not read it, so writing it whole "
                f"would lose what it holds: FileRead {shown} first, then FileEdit the part to "
                "change (or FileWrite its complete new content)"
            )
        with edit_diagnostics(ctx.workspace, [path], trusted=ctx.trusted) as check:
            try:
                existed = atomic_write(path, params.content)
            except OSError as exc:
                raise ToolError(f"cannot write {shown}: {exc.strerror or exc}") from exc
        return ToolOutcome(write_summary(shown, params.content, existed=existed) + check.report())


TOOL = FileWrite()
