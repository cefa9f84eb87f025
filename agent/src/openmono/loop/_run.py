"""The agent loop: a short driver; each step lives in its own module.

One user turn:
    1. prompt    -- the system prompt (the session's `system_prompt(mode)`, one layer up) is
                    built once and rebuilt when the mode or memory changes; the user's message
                    is recorded
    2. context   -- above 65 % of n_ctx checkpoint with a summary, above 80 % compact (`_context`)
    3. stream    -- one model reply, text and thinking forwarded live; a context overflow
                    compacts and retries once; degenerate text stops the reply (`_stream`)
    4. record    -- the assistant message is persisted (also when cancelled mid-stream)
    5. guard     -- repeated calls: warned first, then not run, then the turn ends (`_guards`)
    6. dispatch  -- calls go through the tool pipeline, reads in parallel, writes in order
                    (`_dispatch`); results are recorded
    7. repeat    -- until a reply has no tool calls, or the iteration cap
Every turn ends with exactly one `TurnDone` event, which `run_turn` also returns.

While step 6 runs, `dispatching_loop()` is this loop: a tool that changes the conversation rather
than the workspace (a plan-mode switch, the todo list) acts on the loop that called it, also
when that loop is a sub-agent's or a playbook step's running inside another call.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass

from openmono.llm import (
    ChatMessage,
    ContextOverflowError,
    LLMError,
    Model,
    ToolCall,
    ToolSpec,
    estimate_tokens,
)
from openmono.loop import _context, _cutoff
from openmono.loop._catalog import ToolCatalog
from openmono.loop._dispatch import CallOutcome, Dispatcher
from openmono.loop._events import EventSink, Notice, TurnDone, UsageReport, discard
from openmono.loop._guards import DoomLoopGuard, call_signature
from openmono.loop._state import Conversation
from openmono.loop._stream import Reply, stream_reply
from openmono.permissions import Mode

_DISPATCHING: ContextVar[AgentLoop | None] = ContextVar("openmono_dispatching_loop", default=None)


def dispatching_loop() -> AgentLoop | None:
    """The loop whose tool calls run in this task (see the module docstring), None outside."""
    return _DISPATCHING.get()


# Tool definitions may use at most this share of the context, else the model gets none.
TOOLS_MAX_SHARE = 0.5
CANCELLED_RESULT = "Error: cancelled by the user before this call finished."
# Sent once (never recorded) after a reply with neither text nor a tool call.
EMPTY_NUDGE = (
    "[Your last reply was empty. Answer the user's request now, or call a tool to make progress.]"
)
EMPTY_STOP = "the model gave an empty reply twice (no text, no tool call)"


@dataclass
class LoopOptions:
    """Knobs of one loop; `n_ctx` comes from the server's `/props` when it answers."""

    max_iterations: int = 50
    n_ctx: int = 8192
    max_tokens: int | None = None
    temperature: float | None = None


class AgentLoop:
    """Runs user turns against one conversation (see the module docstring for the steps)."""

    def __init__(
        self,
        model: Model,
        dispatcher: Dispatcher,
        conversation: Conversation,
        *,
        options: LoopOptions | None = None,
        mode: Mode = "agent",
        system_prompt: Callable[[Mode], str] | None = None,
    ) -> None:
        self.model = model
        self.dispatcher = dispatcher
        self.catalog: ToolCatalog = dispatcher.catalog
        self.conv = conversation
        self.options = options or LoopOptions()
        self._system_prompt = system_prompt
        self.mode: Mode = mode
        self.last_reply: Reply | None = None
        self._warned_tools = False
        # the user's own message of the turn running now (the `read_only_task` step reads it)
        self.task: str | None = None

    # -- step 1 -----------------------------------------------------------------------------
    def set_mode(self, mode: Mode) -> None:
        self.mode = mode
        self.refresh_system_prompt()

    def refresh_system_prompt(self) -> None:
        if self._system_prompt is not None:
            self.conv.system = self._system_prompt(self.mode)

    def context_tokens(self) -> int:
        tokens = self.conv.tokens()
        if not self.conv.known_count:
            # the tools actually offered: a small context gets only the core set
            tokens += estimate_tokens([]) + self._tool_tokens(self.offered_tools())
        return tokens

    # -- step 2 -----------------------------------------------------------------------------
    async def fit_context(self, emit: EventSink, force: bool = False) -> None:
        n_ctx = self.options.n_ctx
        used = self.context_tokens()
        note: str | None = None
        if force or used > n_ctx * _context.COMPACT_RATIO:
            note = _context.compact(self.conv, n_ctx, self._overhead(), force=force)
        elif used > n_ctx * _context.CHECKPOINT_RATIO:
            note = await _context.checkpoint(self.conv, self.model, n_ctx, self._overhead())
        if note:
            emit(Notice(message=note))

    def _overhead(self) -> int:
        """Tokens every request spends before the messages: system prompt and tool definitions."""
        tools = self._tool_tokens(self.offered_tools())
        return estimate_tokens([ChatMessage(role="system", content=self.conv.system)]) + tools

    # -- step 3 -----------------------------------------------------------------------------
    def offered_tools(self, emit: EventSink | None = None) -> list[ToolSpec]:
        """The tools for this mode; a core subset, or none, when their definitions would crowd
        the context (a small n_ctx cannot hold 16 JSON schemas and a conversation)."""
        budget = self.options.n_ctx * TOOLS_MAX_SHARE
        full = self.catalog.for_mode(self.mode)
        core = [t for t in full if self.catalog.facts_of(t.name).core]
        for tools, what in ((full, ""), (core, "only the core tools")):
            cost = self._tool_tokens(tools)
            if cost <= budget:
                if what:
                    self._warn_tools(emit, f"{what} (~{cost} tokens)")
                return tools
        self._warn_tools(emit, "no tools")
        return []

    def _tool_tokens(self, tools: list[ToolSpec]) -> int:
        return self.model.tool_tokens(tools)

    def _warn_tools(self, emit: EventSink | None, what: str) -> None:
        if emit is not None and not self._warned_tools:
            self._warned_tools = True
            message = (
                f"The context ({self.options.n_ctx} tokens) is too small for every tool "
                f"definition: offering {what}."
            )
            emit(Notice(level="warning", message=message))

    async def _stream(
        self, reply: Reply, emit: EventSink, extra: Sequence[ChatMessage] = ()
    ) -> Reply:
        """Step 3 (and 3b: a reply cut off by the output limit is completed, see `_cutoff`)."""
        await self._stream_once(reply, emit, extra)
        for _ in range(_cutoff.CONTINUE_LIMIT):
            if not _cutoff.is_cut_off(reply):
                break
            emit(
                Notice(
                    level="warning", message="The reply hit the output limit: asking for the rest."
                )
            )
            more = Reply()
            await self._stream_once(more, emit, [*extra, *_cutoff.continuation(reply)])
            _cutoff.join(reply, more)
        return reply

    async def _stream_once(
        self, reply: Reply, emit: EventSink, extra: Sequence[ChatMessage]
    ) -> Reply:
        tools = self.offered_tools(emit)
        for attempt in (1, 2):
            try:
                return await stream_reply(
                    self.model,
                    [*self.conv.wire(), *extra],
                    tools,
                    emit,
                    reply,
                    max_tokens=self.options.max_tokens,
                    temperature=self.options.temperature,
                )
            except ContextOverflowError as exc:
                if attempt == 2:
                    raise
                if exc.n_ctx:
                    self.options.n_ctx = exc.n_ctx
                emit(Notice(level="warning", message="The prompt did not fit: compacting."))
                await self.fit_context(emit, force=True)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- step 4 -----------------------------------------------------------------------------
    def _record(self, reply: Reply, interrupted: bool = False) -> None:
        calls = (
            []
            if interrupted
            else [ToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in reply.calls]
        )
        if not (reply.text or reply.reasoning or calls):
            return
        message = ChatMessage(
            role="assistant",
            content=reply.text,
            reasoning_content=reply.reasoning or None,
            tool_calls=calls,
        )
        self.conv.add(message, interrupted=interrupted)

    def _report_usage(self, reply: Reply, emit: EventSink) -> None:
        if reply.usage is None:
            return
        total = reply.usage.prompt_tokens + reply.usage.completion_tokens
        if reply.usage.prompt_tokens:
            self.conv.calibrate(total, len(self.conv.messages))
        emit(
            UsageReport(
                prompt_tokens=reply.usage.prompt_tokens,
                completion_tokens=reply.usage.completion_tokens,
                tokens_per_s=reply.tokens_per_s(),
                context_tokens=total,
                n_ctx=self.options.n_ctx,
            )
        )

    # -- steps 5 and 6 ------------------------------------------------------------------------
    def _answer(self, outcome: CallOutcome) -> None:
        self.conv.add(
            ChatMessage(role="tool", content=outcome.content, tool_call_id=outcome.call.id),
            tool_name=outcome.call.name,
            is_error=not outcome.ok,
        )

    async def _dispatch(
        self, reply: Reply, guard: DoomLoopGuard, turn: str, emit: EventSink
    ) -> bool:
        """Run the reply's calls; False when the doom-loop guard ended the turn.

        The guard's tiers: a warned call runs and its result carries the warning; a blocked call
        gets the guard's message as its error; once the guard stops, nothing more runs.
        """
        warned: dict[str, str] = {}
        blocked: dict[str, str] = {}
        for call in reply.calls:
            verdict = guard.check(call_signature(call.name, call.arguments))
            if verdict is not None:
                (warned if verdict.tier == "warn" else blocked)[call.id] = verdict.message
                emit(Notice(level="warning", message=verdict.message))
        outcomes: dict[str, CallOutcome] = {
            c.id: CallOutcome(c, f"Error: {blocked[c.id]}", ok=False, denied=True)
            for c in reply.calls
            if c.id in blocked
        }

        def done(outcome: CallOutcome) -> None:
            note = warned.get(outcome.call.id)
            if note:
                outcome.content += f"\n[loop guard] {note}"
            outcomes[outcome.call.id] = outcome

        runnable = [c for c in reply.calls if c.id not in blocked]
        dispatching = _DISPATCHING.set(self)
        try:
            if runnable and not guard.stopped:
                await self.dispatcher.run(runnable, self.mode, turn, emit, done, task=self.task)
        finally:
            _DISPATCHING.reset(dispatching)
            # Every call gets an answer, also when cancelled: an orphaned call breaks the next turn.
            for call in reply.calls:
                outcome = outcomes.get(call.id) or CallOutcome(call, CANCELLED_RESULT, ok=False)
                if call.id not in outcomes and guard.stopped:
                    outcome = CallOutcome(call, "Error: not run, the turn was stopped", ok=False)
                self._answer(outcome)
        return not guard.stopped

    def take_back_last_turn(self) -> str | None:
        """Remove the last user turn (for /retry); its prompt, or None when there is none."""
        for i in range(len(self.conv.messages) - 1, -1, -1):
            message = self.conv.messages[i]
            if message.role == "user" and message.content is not None:
                if i == 0 and message.content.startswith(("[Checkpoint", "[Earlier")):
                    return None
                self.conv.truncate(i)
                return message.content
        return None

    # -- the driver ---------------------------------------------------------------------------
    async def run_turn(
        self, prompt: str, emit: EventSink = discard, *, typed: str | None = None
    ) -> TurnDone:
        """Run one user turn to its end; cancellation keeps what was said and re-raises.

        `typed`: what the user wrote, when `prompt` adds to it (attached files, a skill's text);
        it, never the added text, decides whether the turn only reads. A run nested in another
        loop's call (a sub-agent, a playbook step) serves that loop's turn: its prompt was
        written by the model, so the outer turn's message decides."""
        turn = secrets.token_hex(4)
        parent = dispatching_loop()
        self.task = parent.task if parent is not None else (prompt if typed is None else typed)
        self.conv.add(ChatMessage(role="user", content=prompt))
        return await self.continue_turn(turn, emit)

    async def continue_turn(self, turn: str, emit: EventSink = discard) -> TurnDone:
        guard = DoomLoopGuard()
        text = ""
        nudge: list[ChatMessage] = []
        nudged = False
        for iteration in range(1, self.options.max_iterations + 1):
            reply = Reply()
            self.last_reply = reply
            try:
                await self.fit_context(emit)
                await self._stream(reply, emit, nudge)
            except asyncio.CancelledError:
                self._record(reply, interrupted=True)
                emit(TurnDone(reason="cancelled", text=reply.text, iterations=iteration))
                raise
            except ContextOverflowError as exc:
                return self._done(emit, "context", text, iteration, str(exc))
            except LLMError as exc:
                self._record(reply, interrupted=True)
                return self._done(
                    emit, "error", reply.text, iteration, f"{type(exc).__name__}: {exc}"
                )
            self._record(reply)
            self._report_usage(reply, emit)
            text = reply.text
            if reply.degenerate:
                where = "thinking" if reply.degenerate_in == "reasoning" else "reply"
                message = f"The {where} degenerated into repetition: stopped."
                emit(Notice(level="warning", message=message))
                return self._done(emit, "repetition", text, iteration, "repetitive output")
            nudge = []
            if not reply.calls and not reply.text.strip():
                # An empty reply (no text, no call; maybe thinking only): one nudge, then a stop.
                if nudged:
                    return self._done(emit, "empty", text, iteration, EMPTY_STOP)
                nudged = True
                emit(Notice(level="warning", message="The model's reply was empty: asking again."))
                nudge = [ChatMessage(role="user", content=EMPTY_NUDGE, from_loop=True)]
                continue
            if not reply.calls:
                return self._done(emit, "stop", text, iteration)
            try:
                keep_going = await self._dispatch(reply, guard, turn, emit)
            except asyncio.CancelledError:
                emit(TurnDone(reason="cancelled", text=text, iterations=iteration))
                raise
            if not keep_going:
                return self._done(
                    emit, "doom_loop", text, iteration, "the model kept repeating calls"
                )
        return self._done(
            emit, "max_iterations", text, self.options.max_iterations,
            f"stopped after {self.options.max_iterations} iterations",
        )  # fmt: skip

    def _done(
        self, emit: EventSink, reason: str, text: str, iterations: int, error: str | None = None
    ) -> TurnDone:
        done = TurnDone.model_validate(
            {"reason": reason, "text": text, "iterations": iterations, "error": error}
        )
        emit(done)
        return done
