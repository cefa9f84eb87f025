"""`PromptedTools`: the tool protocol as a wrapper around a `Model`, the way `/debug` wraps one.

Whatever the protocol, what comes out is clean text and whole tool calls: the loop never learns
how the model was shown its tools (`_protocol` decides from the setting and the probe).

    native    the tools go to the server (`tools`), which renders them and parses the calls back
    prompted  the conversation is rewritten for a template without tools (`_prompted`: the tools
              in the system prompt, worked examples, earlier calls and results as text), the
              server gets no `tools`, and on llama.cpp a GBNF grammar (`_grammar`) constrains the
              reply; in a request that only reads, writers may be left out of the examples, or of
              everything the model sees (`_intent`, `llm.tool_intent`); a turn's first request may
              be asked its action first and then allowed only that tool's calls (`_pick`,
              `llm.tool_pick`; a change request that has only read is asked again after the
              result: `llm.tool_repick`), their path one the request names (`_ground`,
              `llm.tool_ground`); a server that refuses the grammar gets the request again without
              it, and from then on none (said once, as a `Note`)

Either way a call the model writes into its answer is read back from the text (`textcalls`; under
`native` unless `llm.recover_text_calls` is off) and its markup never reaches the text. Shown as it
came, it went to the user (`openmono -p` printed `<tool_call>{...}</tool_call>` as the answer of
the bundled model): so the text streams up to the first call marker and is held from there (a
chunk ending in what could start a marker holds that tail until the next chunk settles it), and
the rest comes at the end without the calls, or as written when none was taken out (`CallHoldback`).
A fenced ```json call is read back too but not held: code blocks would then wait for the end of
every reply. A call the server returns as a structured call is passed on in both protocols, its
arguments coerced with the tool's schema; the text is then not searched for more. Order of the
closing events: the rest of the text, the server's calls, the calls read from the text, `Usage`,
`Done`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Sequence
from typing import Any, Generic, TypeVar

from openmono.config import LLMSettings
from openmono.llm._assemble import new_call_id
from openmono.llm._coerce import coerce_arguments
from openmono.llm._errors import HTTPStatusError, LLMError
from openmono.llm._events import (
    Done,
    Note,
    StreamEvent,
    TextDelta,
    ToolCallComplete,
    Usage,
)
from openmono.llm._grammar import tool_grammar
from openmono.llm._ground import Grounding, grounded
from openmono.llm._intent import latest_request, shown_tools
from openmono.llm._messages import ChatMessage, ModelInfo, ToolSpec, estimate_tokens
from openmono.llm._model import Model
from openmono.llm._pick import (
    PICK_MAX_TOKENS,
    Ask,
    after_read,
    opens_turn,
    pick_grammar,
    pick_messages,
    picked,
)
from openmono.llm._prompted import prompted_messages, prompted_overhead
from openmono.llm._protocol import ProtocolChoice, ToolProtocol, ToolSupport, choose_protocol
from openmono.llm._wire import error_message
from openmono.llm.textcalls import TAG_MARKERS, Recovery, recover_tool_calls

M = TypeVar("M", bound=Model)
# How long the picked call waits for the workspace to say which words are paths (`_ground`).
GROUND_TIMEOUT_S = 5.0


class PromptedTools(Generic[M]):
    """`inner` shown its tools by the protocol `settings.tool_protocol` asks for (see above)."""

    def __init__(self, inner: M, settings: LLMSettings) -> None:
        self.inner = inner
        self.setting = settings.tool_protocol
        self.grammar = settings.tool_grammar  # off for good once a server refused one
        self.recover = settings.recover_text_calls
        self.intent = settings.tool_intent
        self.pick = settings.tool_pick
        self.repick = settings.tool_repick
        self.ground = settings.tool_ground
        # set by the session that knows the workspace (`openmono.agent`); None: nothing is held
        self.grounding: Grounding | None = None
        self.choice: ProtocolChoice | None = None  # decided by probe()
        self.takes_grammar = False
        self._notes: list[str] = []

    @property
    def protocol(self) -> ToolProtocol:
        """The protocol in use: the probe's choice; before it, the setting (auto: native)."""
        if self.choice is not None:
            return self.choice.protocol
        return "prompted" if self.setting == "prompted" else "native"

    async def probe(self) -> ModelInfo:
        info = await self.inner.probe()
        source = info.tools_known_from or "unknown"
        support = ToolSupport(info.supports_tools, source, info.template_protocol)
        choice = choose_protocol(self.setting, support)
        if choice.warning and (self.choice is None or self.choice.warning != choice.warning):
            self._notes.append(choice.warning)
        self.choice, self.takes_grammar = choice, info.takes_grammar
        return info.model_copy(
            update={"tool_protocol": choice.protocol, "protocol_reason": choice.reason}
        )

    def tool_tokens(self, tools: Sequence[ToolSpec]) -> int:
        if self.protocol == "prompted":
            return estimate_tokens(prompted_overhead(tools))
        return self.inner.tool_tokens(tools)

    async def aclose(self) -> None:
        aclose = getattr(self.inner, "aclose", None)
        if aclose is not None:
            await aclose()

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] | None = None,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        response_format: dict[str, Any] | None = None,
        grammar: str | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        offered = list(tools or ())
        prompted = self.protocol == "prompted"
        sent: Sequence[ChatMessage] = messages
        ours = prompted and bool(offered) and grammar is None and response_format is None
        before: Usage | None = None  # step 1's tokens (`_pick`), added to the reply's
        if prompted:
            shown = shown_tools(offered, latest_request(messages), self.intent)
            offered = shown.block
            chosen: ToolSpec | None = None
            if ours and offered and self.grammar and self.takes_grammar:
                asked = self._to_pick(messages, offered)
                if asked is not None:
                    chosen, before = await self._pick(asked, temperature)
                if chosen is not None and asked is not None:
                    held = await self._held(chosen, asked.request)
                    grammar = tool_grammar([held or chosen], prose=False)
                else:
                    grammar = tool_grammar(offered)
            last = chosen.name if chosen else None
            sent = prompted_messages(messages, offered, shown.examples, last)
        while self._notes:
            yield Note(message=self._notes.pop(0))
        while True:
            reading = _Reading(offered, prompted, prompted or self.recover, grammar is not None)
            events = self.inner.stream(
                sent,
                None if prompted else offered or None,
                max_tokens=max_tokens,
                temperature=temperature,
                response_format=response_format,
                grammar=grammar,
            )
            try:
                async for event in events:
                    for out in reading.feed(event):
                        yield _plus(out, before)
                for out in reading.finish():
                    yield _plus(out, before)
                return
            except HTTPStatusError as exc:
                if not (ours and grammar is not None and exc.status == 400 and reading.fresh):
                    raise
                # Not every server (or build) takes a grammar: go on unconstrained, and say so.
                grammar, self.grammar = None, False
                sent = prompted_messages(messages, offered, shown.examples)
                yield Note(
                    message="The server refused the tool-call grammar "
                    f"({error_message(exc.body)}): tool calls are no longer constrained."
                )
            finally:
                aclose = getattr(events, "aclose", None)
                if aclose is not None:
                    await aclose()

    def _to_pick(self, messages: Sequence[ChatMessage], offered: list[ToolSpec]) -> Ask | None:
        """What step 1 is asked (`_pick`), or None: no step 1 for this request."""
        if self.pick != "two_step":
            return None
        opening = opens_turn(messages)
        if opening is not None:
            return Ask(opening, offered)
        return after_read(messages, offered) if self.repick == "after_read" else None

    async def _held(self, tool: ToolSpec, request: str) -> ToolSpec | None:
        """`tool` with its path arguments held to the paths `request` names (`_ground`), or None
        (off, nothing named, or the workspace did not answer in time)."""
        if self.ground != "named" or self.grounding is None or not tool.paths:
            return None
        try:
            named = await asyncio.wait_for(self.grounding(request), GROUND_TIMEOUT_S)
        except TimeoutError:
            return None
        return grounded(tool, named) if named is not None else None

    async def _pick(
        self, asked: Ask, temperature: float | None
    ) -> tuple[ToolSpec | None, Usage | None]:
        """Step 1 of `two_step` (`_pick`): the tool `request` needs, or None (no tool, or the
        pick failed: the request then goes as without the step)."""
        text: list[str] = []
        usage = None
        events = self.inner.stream(
            pick_messages(asked.tools, asked.request, asked.last, asked.plain),
            None,
            max_tokens=PICK_MAX_TOKENS,
            temperature=temperature,
            grammar=pick_grammar(asked.tools),
        )
        try:
            async for event in events:
                if isinstance(event, TextDelta):
                    text.append(event.text)
                elif isinstance(event, Usage):
                    usage = event
        except LLMError:
            return None, None
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()
        return picked("".join(text), asked.tools), usage


def _plus(event: StreamEvent, before: Usage | None) -> StreamEvent:
    """The reply's `Usage` with an earlier request's of the same turn added (the loop keeps the
    last `Usage` it sees)."""
    if before is None or not isinstance(event, Usage):
        return event
    return event.model_copy(
        update={
            "prompt_tokens": event.prompt_tokens + before.prompt_tokens,
            "completion_tokens": event.completion_tokens + before.completion_tokens,
        }
    )


class _Reading:
    """One reply on its way through: text held from a call marker, closing events kept for the
    end, where the calls written as text are read back (see the module docstring)."""

    def __init__(self, tools: list[ToolSpec], prompted: bool, recover: bool, tagged: bool) -> None:
        self.tools = tools
        self.schemas = {t.name: t.parameters for t in tools} if prompted else {}
        self.holdback = CallHoldback() if recover and tools else None
        self.tagged = tagged  # under the grammar only `<tool_call>` blocks can be calls
        self.text: list[str] = []
        self.calls: list[ToolCallComplete] = []
        self.closing: list[StreamEvent] = []
        self.fresh = True  # nothing came yet

    def feed(self, event: StreamEvent) -> list[StreamEvent]:
        self.fresh = False
        if isinstance(event, TextDelta) and self.holdback is not None:
            self.text.append(event.text)
            shown = self.holdback.feed(event.text)
            if shown == event.text:
                return [event]
            return [TextDelta(text=shown)] if shown else []
        if isinstance(event, ToolCallComplete):
            self.calls.append(self._coerced(event))
            return []
        if isinstance(event, Usage | Done):
            self.closing.append(event)
            return []
        return [event]

    def finish(self) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        found = self._recovered()
        held = self.holdback
        if held is not None and (rest := held.finish("".join(self.text), found.removed)):
            out.append(TextDelta(text=rest))
        calls = [*self.calls, *_complete(found)]
        out += [c.model_copy(update={"index": i}) for i, c in enumerate(calls)]
        return out + self.closing

    def _recovered(self) -> Recovery:
        if self.holdback is None or self.calls:  # the server's own calls: the text is text
            return Recovery("")
        return recover_tool_calls("".join(self.text), self.tools, tagged_only=self.tagged)

    def _coerced(self, call: ToolCallComplete) -> ToolCallComplete:
        """A structured call the server sent although it was shown no `tools` (prompted): its
        arguments coerced as the client would have, had it known the schemas."""
        schema = self.schemas.get(call.name)
        if schema is None or call.error is not None:
            return call
        try:
            parsed = json.loads(call.arguments or "{}")
        except ValueError:
            return call
        if not isinstance(parsed, dict) or (fixed := coerce_arguments(parsed, schema)) == parsed:
            return call
        return call.model_copy(update={"arguments": json.dumps(fixed, ensure_ascii=False)})


def _complete(found: Recovery) -> list[ToolCallComplete]:
    """The calls (and call-shaped problems, which must not run) read from the text, in order."""
    items: list[tuple[int, ToolCallComplete]] = []
    for c in found.calls:
        arguments = json.dumps(c.arguments, ensure_ascii=False)
        call = ToolCallComplete(
            index=0, id=new_call_id(), name=c.name, arguments=arguments, source="text"
        )
        items.append((c.start, call))
    for p in found.problems:
        call = ToolCallComplete(
            index=0,
            id=new_call_id(),
            name=p.name or "",
            arguments="{}",
            source="text",
            truncated=p.truncated,
            error=p.message,
        )
        items.append((p.start, call))
    return [call for _, call in sorted(items, key=lambda item: item[0])]


class CallHoldback:
    """The text of one reply as it may be shown (see the module docstring)."""

    def __init__(self) -> None:
        self.shown = 0  # characters of the text shown so far (always a prefix of it)
        self._held = ""
        self._holding = False

    def feed(self, text: str) -> str:
        """What of `text` (and of the text held before it) may be shown now."""
        if self._holding:
            self._held += text
            return ""
        pending = self._held + text
        found = [i for i in (pending.find(m) for m in TAG_MARKERS) if i >= 0]
        if found:
            self._holding = True
            cut = min(found)
        else:
            cut = len(pending) - _open_prefix(pending)
        self._held = pending[cut:]
        self.shown += cut
        return pending[:cut]

    def finish(self, text: str, calls: Sequence[tuple[int, int]]) -> str:
        """What is left to show of `text` (the whole reply) once it ended, without the spans
        (start, end) of the calls recovered from it."""
        if not calls or min(start for start, _ in calls) < self.shown:
            # nothing taken out, or a call (a fenced one) already shown: the rest as written
            return text[self.shown :]
        pieces, pos = [], self.shown
        for start, end in sorted(calls):
            pieces.append(text[pos:start])
            pos = end
        pieces.append(text[pos:])
        return "".join(pieces).rstrip()


def _open_prefix(text: str) -> int:
    """The length of the longest tail of `text` that a marker starts with (0 if none)."""
    best = 0
    for marker in TAG_MARKERS:
        for n in range(min(len(marker) - 1, len(text)), best, -1):
            if text.endswith(marker[:n]):
                best = n
                break
    return best
