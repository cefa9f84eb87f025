"""What both interactive surfaces hold: the open session, its statistics, and the /think, /debug
switches. `SessionHost` is a mixin; the surface supplies `approve`, `ask_user` and `print`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from openmono.agent import Agent, open_agent
from openmono.cli._debug import DebugModel
from openmono.config import RunOptions, Settings
from openmono.errors import OpenMonoError
from openmono.llm import Model, OpenAICompatModel, PromptedTools, RequestOptions, model_label
from openmono.loop import EventSink, LoopEvent, Notice, ToolFinished, TurnDone, UsageReport

if TYPE_CHECKING:
    from openmono.loop import Question
    from openmono.permissions import Answer, PermissionRequest


@dataclass
class SessionStats:
    """Tokens, time and tool calls since the surface started (`/stats`); fed every loop event."""

    started: float = field(default_factory=time.monotonic)
    turns: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_replies: int = 0
    tool_calls: int = 0
    tool_failures: int = 0
    tools: dict[str, int] = field(default_factory=dict)
    busy_s: float = 0.0
    last_tokens_per_s: float | None = None
    context_tokens: int = 0
    n_ctx: int = 0

    def __call__(self, event: LoopEvent) -> None:
        if isinstance(event, UsageReport):
            self.model_replies += 1
            self.prompt_tokens += event.prompt_tokens
            self.completion_tokens += event.completion_tokens
            self.last_tokens_per_s = event.tokens_per_s or self.last_tokens_per_s
            self.context_tokens, self.n_ctx = event.context_tokens, event.n_ctx
        elif isinstance(event, ToolFinished):
            self.tool_calls += 1
            self.tool_failures += 0 if event.ok else 1
            self.tools[event.name] = self.tools.get(event.name, 0) + 1
        elif isinstance(event, TurnDone):
            self.turns += 1


class SessionHost:
    """Opens and reopens the agent session of an interactive surface."""

    opts: RunOptions
    settings: Settings
    workspace: Path
    agent: Agent | None
    stats: SessionStats
    debug: bool
    thinking: RequestOptions
    model_override: Model | None

    def init_host(self, opts: RunOptions, model: Model | None = None) -> None:
        """`model`: talk to this one instead of the configured endpoint (benchmarks)."""
        self.opts = opts
        self.model_override = model
        self.settings = opts.settings()
        self.workspace = opts.workspace_dir(self.settings)
        self.agent = None
        self.stats = SessionStats()
        self.debug = False
        self.running = True
        self.last_reasoning = ""
        # /think: off unless the user turns it on (see RequestOptions for what is sent).
        self.thinking = RequestOptions(thinking=False)

    @property
    def current(self) -> Agent:
        if self.agent is None:
            raise OpenMonoError("no session is open")
        return self.agent

    async def approve(self, request: PermissionRequest) -> Answer:
        raise NotImplementedError

    async def ask_user(self, question: Question) -> str:
        raise NotImplementedError

    def print(self, markup: str = "") -> None:
        raise NotImplementedError

    @property
    def sink(self) -> EventSink:
        raise NotImplementedError

    def show_notices(self) -> None:
        """What opening the session had to say (an MCP server that did not connect, settings
        left out), shown at once instead of with the first turn."""
        pending = self.current.pending_notices
        while pending:
            self.sink(Notice(level="warning", message=pending.pop(0)))

    async def open(self, resume: str | None = None) -> Agent:
        mode = self.opts.mode
        if self.agent is not None:
            mode = self.agent.loop.mode
            await self.agent.aclose()
            self.agent = None
        self.agent = await open_agent(
            self.settings,
            self.workspace,
            resume=resume,
            mode=mode,
            allow=self.opts.allow,
            yolo=self.opts.yolo,
            approver=self.approve,
            asker=self.ask_user,
            model=self.model_override,
        )
        self.wire_model()
        return self.agent

    def base_model(self) -> Model:
        model = self.current.loop.model
        return model.inner if isinstance(model, DebugModel) else model

    def client(self) -> OpenAICompatModel | None:
        """The OpenAI-compatible client under the session's model (its tool protocol and
        /debug around it), if that is what it talks to."""
        model = self.base_model()
        inner = model.inner if isinstance(model, PromptedTools) else model
        return inner if isinstance(inner, OpenAICompatModel) else None

    def wire_model(self) -> None:
        """Apply /think and /debug to the session's model (after opening or switching it)."""
        model = self.base_model()
        if (client := self.client()) is not None:
            client.options = self.thinking
        self.current.loop.model = DebugModel(model, self.print) if self.debug else model

    async def close_host(self) -> None:
        if self.agent is not None:
            await self.agent.aclose()
            self.agent = None

    def model_name(self) -> str:
        """The model as people read it (a GGUF path shows as its file stem)."""
        agent = self.current
        return model_label(agent.info.model if agent.info else (self.settings.llm.model or "?"))
