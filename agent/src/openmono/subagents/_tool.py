"""The `Agent` tool: runs a sub-agent (a fresh loop) for one task and returns its final answer.

The child gets: a fresh conversation (the parent's system prompt plus the type's instructions, then
the task), the tools its type allows out of the parent's own catalog, the parent's permission
engine and approver (a child's denial is the parent's denial, and what the user allows or denies
for the session holds for both), the parent's executor, hooks and MCP tools, and a turn cap. Its
transcript is a session file under the parent's session folder:
`<data>/sessions/<parent id>/agents/<child id>.jsonl`. The model is the parent's current one
(asked at each start, so a model switch in the parent applies to its children). The child's tool
calls are reported to the parent's surface with ids `<Agent call id>/<child call id>`.

The tool itself counts as read-only for the parent's mode guard: in plan or ask mode the child runs
in ask mode, so it still cannot change anything.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from openmono_contracts import ToolRequest, ToolResult
from openmono_contracts.toolfacts import DeclaresFacts, params_schema
from pydantic import BaseModel, Field, ValidationError

from openmono.llm import Model, ToolSpec, conversation
from openmono.loop import (
    AgentLoop,
    Conversation,
    Dispatcher,
    EventSink,
    LoopEvent,
    LoopOptions,
    OfferedTool,
    PermissionAsked,
    ToolCatalog,
    ToolFinished,
    ToolStarted,
)
from openmono.permissions import Answer, Approver, Mode, PermissionRequest
from openmono.sessions import SessionHeader, SessionWriter, new_session_id
from openmono.subagents._errors import SubagentError
from openmono.subagents._types import AGENT_TYPES, AgentType, get_type

NAME = "Agent"


class Params(BaseModel):
    description: str = Field(description="A short (3-5 word) description of the task.")
    prompt: str = Field(description="The task for the sub-agent, with all the context it needs.")
    agent_type: str = Field(
        default="general-purpose",
        description="The kind of sub-agent: " + ", ".join(AGENT_TYPES) + ".",
    )


def _description(types: Mapping[str, AgentType]) -> str:
    kinds = "\n".join(f"- {t.name}: {t.description}" for t in types.values())
    return (
        "Start a sub-agent with a fresh context for a self-contained task; it works on its own "
        "and returns only its final answer. Give it everything it needs in `prompt`.\n" + kinds
    )


def agent_spec(types: Mapping[str, AgentType] = AGENT_TYPES) -> ToolSpec:
    """The tool as the model sees it, offering `types` (the built-in ones, or a session's)."""
    schema = params_schema(Params)
    schema["properties"]["agent_type"]["description"] = (
        "The kind of sub-agent: " + ", ".join(types) + "."
    )
    return ToolSpec(name=NAME, description=_description(types), parameters=schema)


class AgentTool(DeclaresFacts):
    """The `Toolset` serving `Agent` for one parent loop (see the module docstring)."""

    # Its facts, declared like a worker tool's: read-only for the parent's mode guard (the child
    # has its own), never handed down (no nesting).
    read_only = True
    kind = "think"
    subagents = False

    def __init__(
        self,
        parent: Dispatcher,
        model: Callable[[], Model],
        options: LoopOptions,
        system_prompt: Callable[[Mode], str],
        parent_mode: Callable[[], Mode],
        transcripts: Path,
        *,
        max_turns: int = 20,
        custom: Sequence[AgentType] = (),
        named_model: Callable[[str], Model] | None = None,
    ) -> None:
        self.parent = parent
        self.model = model
        self.options = options
        self.system_prompt = system_prompt
        self.parent_mode = parent_mode
        self.transcripts = transcripts
        self.max_turns = max_turns
        self.children: list[Path] = []
        # the built-in types, then the session's own (a built-in name is never replaced)
        self.types = {**AGENT_TYPES, **{t.name: t for t in custom if t.name not in AGENT_TYPES}}
        # a custom type that names its model gets a client for it (closed after the run)
        self.named_model = named_model
        self._offered = {NAME: OfferedTool(agent_spec(self.types), self.facts())}

    def install(self) -> None:
        """Offer `Agent` in the parent's catalog (its dispatcher then routes the calls here)."""
        self.parent.catalog.install(self)

    # -- the Toolset protocol -----------------------------------------------------------------
    def tools(self) -> Mapping[str, OfferedTool]:
        return self._offered

    async def call(self, request: ToolRequest, emit: EventSink) -> ToolResult:
        started = time.monotonic()
        try:
            params = Params.model_validate(request.params)
            kind = get_type(params.agent_type, self.types)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "arguments"
            error = f"invalid arguments for Agent: {where}: {first['msg']}"
            return ToolResult(
                call_id=request.call_id, ok=False, error=error, error_kind="invalid_params"
            )
        except SubagentError as exc:  # an unknown agent_type: the arguments are wrong
            return ToolResult(
                call_id=request.call_id, ok=False, error=str(exc), error_kind="invalid_params"
            )
        own_model = self.named_model(kind.model) if kind.model and self.named_model else None
        loop, writer, child_id = self._child(kind, params, request.call_id, own_model)
        try:
            with conversation(child_id):  # its own prompt: its own replica at the gateway
                done = await loop.run_turn(params.prompt, self._relay(request.call_id, emit))
        finally:
            writer.close()
            aclose = getattr(own_model, "aclose", None)
            if aclose is not None:
                await aclose()
        elapsed = (time.monotonic() - started) * 1000
        where = f"[sub-agent {kind.name} {child_id}; transcript {writer.path}]"
        if done.reason == "stop":
            output = f"{done.text}\n{where}" if done.text else f"(no answer)\n{where}"
            return ToolResult(call_id=request.call_id, ok=True, output=output, elapsed_ms=elapsed)
        error = f"the sub-agent stopped early ({done.reason}: {done.error or 'no detail'})"
        partial = f"Partial answer:\n{done.text}\n{where}" if done.text else where
        return ToolResult(
            call_id=request.call_id, ok=False, output=partial, error=error, elapsed_ms=elapsed
        )

    # -- building the child -------------------------------------------------------------------
    def child_mode(self, kind: AgentType) -> Mode:
        return kind.mode if self.parent_mode() == "agent" else "ask"

    def child_catalog(self, kind: AgentType) -> ToolCatalog:
        """The parent's tools that `kind` allows (never `Agent`: it is not handed down)."""
        return self.parent.catalog.narrowed(kind.allows)

    def _child(
        self, kind: AgentType, params: Params, call_id: str, model: Model | None = None
    ) -> tuple[AgentLoop, SessionWriter, str]:
        mode = self.child_mode(kind)
        child_id = new_session_id()
        header = SessionHeader(
            session_id=child_id,
            working_directory=str(self.parent.ctx.workspace),
            mode=mode,
            parent_session=self.parent.ctx.session_id,
            parent_call_id=call_id,
            agent_type=kind.name,
            description=params.description,
        )
        writer = SessionWriter(self.transcripts / f"{child_id}.jsonl", header)
        self.children.append(writer.path)
        system = (
            f"{self.system_prompt(mode)}\n\nYou are a sub-agent ({kind.name}) started by another "
            f"agent for one task: {params.description}. {kind.instructions} Your final reply is "
            "all the other agent will see."
        )
        dispatcher = self.parent.derive(self.child_catalog(kind), approver=self._approver(call_id))
        options = LoopOptions(
            max_iterations=min(kind.max_turns, self.max_turns),
            n_ctx=self.options.n_ctx,
            max_tokens=self.options.max_tokens,
            temperature=self.options.temperature,
        )
        loop = AgentLoop(
            model or self.model(), dispatcher, Conversation(system=system, writer=writer),
            options=options, mode=mode,
        )  # fmt: skip
        return loop, writer, child_id

    def _approver(self, parent_call: str) -> Approver | None:
        """The parent's approver, shown the child's calls under the Agent call's id."""
        approver = self.parent.approver
        if approver is None:
            return None

        async def ask(request: PermissionRequest) -> Answer:
            return await approver(replace(request, call_id=f"{parent_call}/{request.call_id}"))

        return ask

    @staticmethod
    def _relay(parent_call: str, emit: EventSink) -> EventSink:
        """The child's tool activity, shown under the Agent call; its text stays private."""

        def relay(event: LoopEvent) -> None:
            if isinstance(event, ToolStarted | ToolFinished | PermissionAsked):
                emit(event.model_copy(update={"call_id": f"{parent_call}/{event.call_id}"}))

        return relay
