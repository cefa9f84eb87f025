"""MemorySave: keep a fact for future sessions in the project's `.openmono/memory/`.

See `openmono_worker.memory` for the layout. The file and the index are written atomically through
the workspace guard (a symlinked `.openmono` cannot redirect them out of the workspace). The result
carries a `memory_saved` effect so the loop reloads memory into its next system prompt.
"""

from __future__ import annotations

from openmono_contracts import MemorySavedEffect, MemoryType
from openmono_contracts.atomicfile import atomic_write
from pydantic import BaseModel, ConfigDict, Field

from openmono_worker.errors import ToolError
from openmono_worker.memory import INDEX, MEMORY_DIR, index_with, render, slug
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
        path = ctx.resolve(f"{MEMORY_DIR}/{file_name}")
        index = ctx.resolve(f"{MEMORY_DIR}/{INDEX}")
        index_text = read_text(index, ctx.show(index)) if index.is_file() else ""
        try:
            existed = atomic_write(
                path, render(params.name, params.type, description, params.content)
            )
            atomic_write(index, index_with(index_text, file_name, params.name, description))
        except OSError as exc:
            raise ToolError(f"cannot save the memory: {exc}") from exc
        shown = ctx.show(path)
        verb = "Updated" if existed else "Saved"
        effect = MemorySavedEffect(name=params.name, type=params.type, path=shown)
        return ToolOutcome(
            f"{verb} memory '{params.name}' ({params.type}) in {shown}", effect=effect
        )


TOOL = MemorySave()
