"""The `Playbook` tool: the model runs a playbook by name with parameters, as one tool call.

It is an agent-side `Toolset` (like `Agent`): the run borrows the session's executor, permissions
and approver (`_host.Host`); gates ask through that approver, so the REPL prompts and ACP sends a
`session/request_permission`; in a non-interactive run a gate stops the run and the tool result
says so. The call itself asks the user first (`permission="ask"`): a playbook may run scripts.
It is never offered inside a playbook, and never handed to a sub-agent.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from openmono_contracts import ToolErrorKind, ToolRequest, ToolResult
from openmono_contracts.toolfacts import DeclaresFacts, params_schema
from pydantic import BaseModel, Field, ValidationError

from openmono.llm import ToolSpec
from openmono.loop import (
    EventSink,
    LoopEvent,
    Notice,
    OfferedTool,
    PermissionAsked,
    ToolFinished,
    ToolStarted,
)
from openmono.playbooks._discover import discover
from openmono.playbooks._errors import PlaybookError
from openmono.playbooks._host import Host, gate_from_approver
from openmono.playbooks._run import PlaybookRunner

NAME = "Playbook"


class Params(BaseModel):
    name: str = Field(description="The playbook's name.")
    parameters: dict[str, Any] = Field(
        default_factory=dict, description="Parameter values by name, as the playbook declares."
    )
    resume: bool = Field(default=False, description="Continue its last unfinished run.")


class PlaybookTool(DeclaresFacts):
    """The `Toolset` serving `Playbook` for one session (see the module docstring)."""

    kind = "execute"
    permission = "ask"
    subagents = False

    def __init__(self, host: Host) -> None:
        self.host = host
        self._offered: dict[str, OfferedTool] = {}

    def spec(self) -> ToolSpec:
        catalog = discover(self.host.workspace, self.host.data_dir)
        listed = "\n".join(
            f"- {p.name}: {p.front.description}"
            + (
                f" (parameters: {', '.join(q.name for q in p.front.parameters)})"
                if p.front.parameters
                else ""
            )
            for p in catalog.playbooks.values()
        )
        description = (
            "Run a playbook: a repeatable multi-step workflow with approval gates. It runs all "
            "its steps and returns their results.\n" + (listed or "(no playbooks are installed)")
        )
        return ToolSpec(name=NAME, description=description, parameters=params_schema(Params))

    def install(self) -> None:
        """Offer `Playbook` (listing the playbooks found now) in the session's catalog."""
        self._offered = {NAME: OfferedTool(self.spec(), self.facts())}
        self.host.dispatcher.catalog.install(self)

    # -- the Toolset protocol -----------------------------------------------------------------
    def tools(self) -> Mapping[str, OfferedTool]:
        return self._offered

    async def call(self, request: ToolRequest, emit: EventSink) -> ToolResult:
        started = time.monotonic()

        def result(
            ok: bool, output: str, error: str | None = None, kind: ToolErrorKind | None = None
        ) -> ToolResult:
            elapsed = (time.monotonic() - started) * 1000
            return ToolResult(
                call_id=request.call_id,
                ok=ok,
                output=output,
                error=error,
                elapsed_ms=elapsed,
                error_kind=kind,
            )

        try:
            params = Params.model_validate(request.params)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "arguments"
            error = f"invalid arguments for Playbook: {where}: {first['msg']}"
            return result(False, "", error, "invalid_params")

        try:
            playbook = discover(self.host.workspace, self.host.data_dir).get(params.name)
            runner = PlaybookRunner(
                playbook, self.host, gate_from_approver(self.host.dispatcher.approver),
                self._relay(request.call_id, emit),
            )  # fmt: skip
            done = await runner.run(params.parameters, resume=params.resume)
        except PlaybookError as exc:
            return result(False, "", str(exc))
        outputs = json.dumps(
            {"state": done.run.state, "outputs": done.run.outputs}, ensure_ascii=False, indent=1
        )
        text = f"{done.message}\n{outputs}"
        return result(done.ok, text, None if done.ok else done.message)

    @staticmethod
    def _relay(parent_call: str, emit: EventSink) -> EventSink:
        """The run's tool activity and notices, shown under the Playbook call."""

        def relay(event: LoopEvent) -> None:
            if isinstance(event, ToolStarted | ToolFinished | PermissionAsked):
                emit(event.model_copy(update={"call_id": f"{parent_call}/{event.call_id}"}))
            elif isinstance(event, Notice):
                emit(event)

        return relay
