"""The worker's tools as one toolset: the worker's catalog, every call run by an `Executor`.

Specs and facts come from the worker's registry (`openmono_worker.tool_specs`), so the schema the
model sees is the one the worker validates against, and what the loop knows about a tool is what
the tool declares (`openmono_contracts.toolfacts`). The call goes to the executor as it is: the
worker validates the arguments and guards every path where the tool runs (in this process, or on
a Celery worker that may sit on another box and see other files), and an invalid call comes back
as an `ok=False` result that names the parameter to fix.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from openmono_contracts import ToolRequest, ToolResult
from openmono_contracts.toolfacts import ToolFacts
from openmono_worker import tool_specs

from openmono.executor import Executor
from openmono.llm import ToolSpec
from openmono.loop._events import EventSink
from openmono.loop._extensions import OfferedTool


def worker_tools(exclude: Iterable[str] = ()) -> dict[str, OfferedTool]:
    """The worker's tools by name, as the loop offers them."""
    skip = set(exclude)
    offered: dict[str, OfferedTool] = {}
    for raw in tool_specs():
        name = str(raw["name"])
        facts = ToolFacts.model_validate(raw.get("facts") or {})
        if name in skip or facts.internal:
            continue  # a tool only the agent itself calls (the repository map) is never offered
        spec = ToolSpec(
            name=name,
            description=str(raw.get("description", "")),
            parameters=dict(raw.get("parameters") or {"type": "object", "properties": {}}),
        )
        offered[name] = OfferedTool(spec, facts)
    return offered


class WorkerTools:
    """The toolset of the worker's tools, run by `executor` (see the module docstring)."""

    def __init__(self, executor: Executor, exclude: Iterable[str] = ()) -> None:
        self.executor = executor
        self._tools = worker_tools(exclude)

    def tools(self) -> Mapping[str, OfferedTool]:
        return self._tools

    async def call(self, request: ToolRequest, emit: EventSink) -> ToolResult:
        return await self.executor.run(request)
