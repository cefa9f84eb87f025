"""The agent loop: a short driver (`_run`) whose steps each live in their own module.

`AgentLoop` runs turns and reports `LoopEvent`s to a sink (the CLI renders them, ACP forwards
them). Its tools come from `Toolset`s in a `ToolCatalog`: `WorkerTools` (the worker's tools, run
by an executor) and whatever the layer above installs (MCP tools, `Agent`, `Playbook`), routed
alike. Wiring a loop to a model, an executor and a session file is `openmono.agent.open_agent`,
one layer up, so the loop never imports MCP, hooks or sub-agents.
"""

from openmono.llm import estimate_tokens
from openmono.loop._catalog import ToolCatalog
from openmono.loop._dispatch import Asker, CallOutcome, DispatchContext, Dispatcher, Question
from openmono.loop._events import (
    EventSink,
    LoopEvent,
    Notice,
    PermissionAsked,
    ReasoningChunk,
    StopReason,
    TextChunk,
    ToolFinished,
    ToolStarted,
    TurnDone,
    UsageReport,
    discard,
)
from openmono.loop._extensions import Narrowed, OfferedTool, ToolHooks, Toolset
from openmono.loop._guards import DoomLoopGuard, RepetitionDetector, call_signature, is_repetitive
from openmono.loop._prepare import PREPARE_STEPS, READY, Pending, Refusal, Step, StepContext
from openmono.loop._repair import Repairs, repair
from openmono.loop._run import AgentLoop, LoopOptions, dispatching_loop
from openmono.loop._state import Conversation, replay
from openmono.loop._worker_tools import WorkerTools, worker_tools

__all__ = [
    "PREPARE_STEPS",
    "READY",
    "AgentLoop",
    "Asker",
    "CallOutcome",
    "Conversation",
    "DispatchContext",
    "Dispatcher",
    "DoomLoopGuard",
    "EventSink",
    "LoopEvent",
    "LoopOptions",
    "Narrowed",
    "Notice",
    "OfferedTool",
    "Pending",
    "PermissionAsked",
    "Question",
    "ReasoningChunk",
    "Refusal",
    "Repairs",
    "RepetitionDetector",
    "Step",
    "StepContext",
    "StopReason",
    "TextChunk",
    "ToolCatalog",
    "ToolFinished",
    "ToolHooks",
    "ToolStarted",
    "Toolset",
    "TurnDone",
    "UsageReport",
    "WorkerTools",
    "call_signature",
    "discard",
    "dispatching_loop",
    "estimate_tokens",
    "is_repetitive",
    "repair",
    "replay",
    "worker_tools",
]
