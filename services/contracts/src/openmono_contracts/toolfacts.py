"""What the agent needs to know about a tool besides its schema, declared once, on the tool.

A worker tool (and the agent's own: `Agent`, `Playbook`, the conversation tools) declares its facts
as class attributes through `DeclaresFacts`; a tool made at run time (an MCP server's) builds a
`ToolFacts` directly. The loop, the permission engine, the mode guard, the sub-agent types and the
ACP surface read these facts instead of keeping lists of tool names (a sub-agent type chooses its
tools by them: what reads, what writes, the shell, the web, code intelligence).

`params_schema(Params)` is the JSON schema a tool's parameters are offered as, the same for the
worker's tools and the agent's own (pydantic's generated titles left out).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["DeclaresFacts", "PlanSwitch", "ToolFacts", "ToolKind", "params_schema"]

# What a call does, as editors show it (the Agent Client Protocol's tool kinds).
ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
PlanSwitch = Literal["enter", "exit"]


class ToolFacts(BaseModel):
    """The facts of one tool; the defaults fit an unknown tool (it may change anything)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Never changes the workspace or anything else outside the conversation.
    read_only: bool = False
    # May run at the same time as other concurrency-safe calls of the same turn.
    concurrency_safe: bool = False
    # Arguments that name a filesystem path: checked against the workspace, matched by rules.
    path_params: tuple[str, ...] = ()
    # Arguments that hold a unified diff; its `---`/`+++` lines name paths too.
    diff_params: tuple[str, ...] = ()
    # The argument that holds a shell command (read-only commands pass the mode guard and run
    # without asking; destructive ones and redirects into protected paths are refused).
    shell_param: str | None = None
    # Writes the files its paths name: snapshotted for /undo, refused on protected paths.
    writes: bool = False
    # Kept when the context is too small for every tool definition.
    core: bool = False
    kind: ToolKind = "other"
    # Reaches the web (a search engine, pages on the internet), not the workspace.
    web: bool = False
    # Answers from an understanding of the code (language servers, an index of it): definitions,
    # references, diagnostics.
    code: bool = False
    # Changes nothing outside the conversation (todos, questions, mode switches): runs in every
    # mode and without asking.
    conversation: bool = False
    # The answer when no rule or flag decides: None = reads inside the workspace run, the rest
    # asks; "allow" / "ask" say so for this tool.
    permission: Literal["allow", "ask"] | None = None
    # Enters or leaves plan mode: offered only where that means something; leaving plan mode asks
    # the user to approve the plan.
    plan_switch: PlanSwitch | None = None
    # May be handed to a sub-agent (mode switches and `Agent` itself are not).
    subagents: bool = True
    # Called by the agent itself, never offered to the model (the repository map).
    internal: bool = False


class DeclaresFacts:
    """Mixin: a tool class states its facts as class attributes; `facts()` collects them."""

    read_only: ClassVar[bool] = False
    concurrency_safe: ClassVar[bool] = False
    path_params: ClassVar[tuple[str, ...]] = ()
    diff_params: ClassVar[tuple[str, ...]] = ()
    shell_param: ClassVar[str | None] = None
    writes: ClassVar[bool] = False
    core: ClassVar[bool] = False
    kind: ClassVar[ToolKind] = "other"
    web: ClassVar[bool] = False
    code: ClassVar[bool] = False
    conversation: ClassVar[bool] = False
    permission: ClassVar[Literal["allow", "ask"] | None] = None
    plan_switch: ClassVar[PlanSwitch | None] = None
    subagents: ClassVar[bool] = True
    internal: ClassVar[bool] = False

    @classmethod
    def facts(cls) -> ToolFacts:
        values: dict[str, Any] = {name: getattr(cls, name) for name in ToolFacts.model_fields}
        return ToolFacts(**values)


def _strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: _strip_titles(v)
            for k, v in node.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def params_schema(model: type[BaseModel]) -> dict[str, Any]:
    """`model`'s JSON schema without pydantic's generated `title` keys: they cost tokens and tell
    the model nothing (a property named `title` stays)."""
    schema: dict[str, Any] = _strip_titles(model.model_json_schema())
    return schema
