"""MemorySave: keep a fact for future sessions, in the project's memory or the user's.

See `_memory` for the layout. It runs in the agent, which reads memory into its system prompt, so
what it saves is what the next prompt holds, wherever the tools run. `scope="project"` (the
default) writes the workspace's `.openmono/memory/` through the workspace guard (a symlinked
`.openmono` cannot redirect it out of the workspace); `scope="user"` writes `<data dir>/memory/`,
the folder every project of this user reads. Both are written atomically; then the calling loop
rebuilds its system prompt with the memory in it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from openmono_contracts.atomicfile import atomic_write
from openmono_contracts.facts import PROJECT_MEMORY_DIR
from openmono_contracts.privatefs import PRIVATE_FILE_MODE, private_dir
from openmono_worker import PathRefused, display_path, resolve_path
from pydantic import BaseModel, ConfigDict, Field

from openmono.conversation._base import ConversationTool, Turn
from openmono.conversation._errors import ConversationError
from openmono.conversation._memory import INDEX, MemoryType, index_with, render, slug


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


class MemorySave(ConversationTool[Params]):
    name = "MemorySave"
    description = (
        "Save something worth remembering in future sessions (user preferences, feedback, "
        "project facts, references). Saving under an existing name replaces that memory."
    )
    conversation = False  # it writes files, if only its own
    permission = "allow"
    params_model = Params

    def __init__(self, user_memory: Path) -> None:
        self.user_memory = user_memory

    async def run(self, params: Params, turn: Turn) -> str:
        file_name = f"{slug(params.name)}.md"
        if params.scope == "user":
            folder = self.user_memory
            if folder.is_symlink():
                raise ConversationError(
                    f"the user memory folder {folder} is a symlink: not written"
                )
            path, index, shown = folder / file_name, folder / INDEX, str(folder / file_name)
            private_dir(folder)  # the user's memory is in the data dir: 0700/0600 (privatefs)
            mode: int | None = PRIVATE_FILE_MODE
        else:
            mode = None  # the project's keep the checkout's modes
            path, index, shown = _in_project(Path(turn.request.workspace), file_name)
        description = " ".join(params.description.split())
        index_text = index.read_text(errors="replace") if index.is_file() else ""
        try:
            existed = atomic_write(
                path, render(params.name, params.type, description, params.content), mode=mode
            )
            atomic_write(
                index, index_with(index_text, file_name, params.name, description), mode=mode
            )
        except OSError as exc:
            raise ConversationError(f"cannot save the memory: {exc}") from exc
        if turn.loop is not None:
            turn.loop.refresh_system_prompt()
        verb = "Updated" if existed else "Saved"
        return f"{verb} {params.scope} memory '{params.name}' ({params.type}) in {shown}"


def _in_project(workspace: Path, file_name: str) -> tuple[Path, Path, str]:
    """The memory file, the index and how the file is shown, inside the workspace's memory."""
    if not workspace.is_dir():
        raise ConversationError(
            f"the workspace {workspace} is not a folder on this machine, so its memory cannot "
            "be saved here: save it with scope user"
        )
    root = workspace.resolve()
    try:
        path = resolve_path(root, f"{PROJECT_MEMORY_DIR}/{file_name}")
        index = resolve_path(root, f"{PROJECT_MEMORY_DIR}/{INDEX}")
    except PathRefused as exc:
        raise ConversationError(str(exc)) from exc
    return path, index, display_path(path, root)
