"""The `Skill` tool: the model loads a skill's instructions by name (progressive disclosure).

An agent-side toolset like `Agent` and `Playbook`. The result is the skill's body, where its
folder is and the files beside it (not their contents: the model reads what the instructions
point at). Loading a skill is what makes its files readable: each file becomes a read that needs
no approval (`PermissionEngine.note_output`, exactly those files), and a folder outside the
workspace (`~/.agents/skills/...`) is handed to the read tools as a read root (`_attach`). Its
scripts run through Bash like any other command, under the same permissions: nothing here runs
them. A skill marked `disable-model-invocation` is not offered (the user runs it with `/name`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from openmono_contracts import ToolRequest, ToolResult
from openmono_contracts.toolfacts import DeclaresFacts, params_schema
from pydantic import BaseModel, Field, ValidationError

from openmono.instructions._catalog import Instructions
from openmono.instructions._files import outside
from openmono.instructions._skills import Skill, skill_content
from openmono.llm import ToolSpec
from openmono.loop import EventSink, OfferedTool
from openmono.permissions import PermissionEngine

NAME = "Skill"
DESCRIPTION = (
    "Load a skill: instructions for a kind of task, with the files beside them. The skills are "
    "listed under '# Skills' in the system prompt; load one before a task it describes."
)


class Params(BaseModel):
    name: str = Field(description="The skill's name, as the list gives it.")
    arguments: str = Field(default="", description="What the skill is to work on, if anything.")


class SkillTool(DeclaresFacts):
    """The `Toolset` serving `Skill` for one session (see the module docstring)."""

    read_only = True
    concurrency_safe = True
    core = True
    kind = "read"
    permission = "allow"

    def __init__(self, ins: Instructions, permissions: PermissionEngine) -> None:
        self.ins = ins
        self.permissions = permissions
        self.roots: list[str] = []
        names = [s.name for s in ins.skills.skills.values() if s.model_invocable]
        schema: dict[str, Any] = params_schema(Params)
        schema["properties"]["name"]["enum"] = names
        spec = ToolSpec(name=NAME, description=DESCRIPTION, parameters=schema)
        self._offered = {NAME: OfferedTool(spec, self.facts())} if names else {}

    def tools(self) -> Mapping[str, OfferedTool]:
        return self._offered

    def open(self, skill: Skill) -> None:
        """Make the skill's files readable (see the module docstring)."""
        folder = skill.folder.resolve()
        if outside(folder, self.ins.workspace) is not None and str(folder) not in self.roots:
            self.roots.append(str(folder))
        for path in [skill.file, *(skill.folder / f for f in skill.files()[0])]:
            self.permissions.note_output(str(path))

    def read_roots(self) -> list[str]:
        return list(self.roots)

    async def call(self, request: ToolRequest, emit: EventSink) -> ToolResult:
        try:
            params = Params.model_validate(request.params)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "arguments"
            error = f"invalid arguments for Skill: {where}: {first['msg']}"
            return ToolResult(
                call_id=request.call_id, ok=False, error=error, error_kind="invalid_params"
            )
        skill = self.ins.skills.skills.get(params.name)
        if skill is None or not skill.model_invocable:
            known = ", ".join(s.name for s in self.ins.skills.skills.values() if s.model_invocable)
            error = f"no skill named {params.name!r}; the skills are: {known or 'none'}"
            return ToolResult(
                call_id=request.call_id, ok=False, error=error, error_kind="invalid_params"
            )
        self.open(skill)
        content = skill_content(skill, self.ins.for_model(skill.folder), params.arguments)
        return ToolResult(call_id=request.call_id, ok=True, output=content)
