"""MemorySave: keep a fact for future sessions, in the project's memory or the user's.

See `openmono_worker.memory` for the layout. `scope="project"` (the default) writes the
workspace's `.openmono/memory/` through the workspace guard (a symlinked `.openmono` cannot redirect
it out of the workspace); `scope="user"` writes `<data dir>/memory/`, the folder every project of
this user reads (a worker on another box has its own data dir: user memory is for local workers).
Both are written atomically. The result carries a `memory_saved` effect so the loop reloads memory
into its next system prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from openmono_contracts import MemorySavedEffect, MemoryType
from openmono_contracts.atomicfile import atomic_write
from openmono_contracts.facts import PROJECT_MEMORY_DIR, USER_MEMORY_DIR
from pydantic import BaseModel, ConfigDict, Field

from openmono_worker.errors import ToolError
from openmono_worker.memory import INDEX, index_with, render, slug
from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome
from openmono_worker.tools._text import read_text


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=100, description="Short title of the memory.")
    type: MemoryType = Field(
        description="user (who the user is), feedback (how they want you to work), "
        "project (facts about this project), reference (where to find things)."
    )
    description: str = Field(
        min_length=1, max_length=300, description="One line: what this memory is for."
    )
    content: str = Field(min_length=1, description="The memory itself (markdown).")
    scope: Literal["project", "user"] = Field(
        default="project",
        description="project (this code base, the default) or user (follows the user to every "
        "project: preferences, how they like to work).",
    )


class MemorySave(Tool[Params]):
    name = "MemorySave"
    description = (
        "Save something worth remembering in future sessions (user preferences, feedback, "
        "project facts, references). Saving under an existing name replaces that memory."
    )
    permission = "allow"
    params_model = Params

    def execute(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        description = " ".join(params.description.split())
        file_name = f"{slug(params.name)}.md"
        if params.scope == "user":
            folder = Path(ctx.settings.data_dir) / USER_MEMORY_DIR
            if folder.is_symlink():
                raise ToolError(f"the user memory folder {folder} is a symlink: not written")
            path, index = folder / file_name, folder / INDEX
        else:
            path = ctx.resolve(f"{PROJECT_MEMORY_DIR}/{file_name}")
            index = ctx.resolve(f"{PROJECT_MEMORY_DIR}/{INDEX}")
        index_text = read_text(index, ctx.show(index)) if index.is_file() else ""
        try:
            existed = atomic_write(
                path, render(params.name, params.type, description, params.content)
            )
            atomic_write(index, index_with(index_text, file_name, params.name, description))
        except OSError as exc:
            raise ToolError(f"cannot save the memory: {exc}") from exc
        shown = ctx.show(path) if params.scope == "project" else str(path)
        verb = "Updated" if existed else "Saved"
        effect = MemorySavedEffect(name=params.name, type=params.type, path=shown)
        return ToolOutcome(
            f"{verb} {params.scope} memory '{params.name}' ({params.type}) in {shown}",
            effect=effect,
        )


TOOL = MemorySave()
