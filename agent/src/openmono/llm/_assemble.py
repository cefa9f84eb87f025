"""Turn decoded `chat.completion.chunk` objects into our stream events.

One `TurnAssembler` per request attempt. It emits deltas as they come, assembles tool-call
fragments per `index` (arguments concatenated; `id` and `name` usually only in the first fragment),
and at the end produces the complete calls (their arguments coerced with the offered tool's
schema), the usage with llama.cpp's `timings`, and `Done`. Calls a model wrote into its text are
the tool protocol's business (`PromptedTools`), not the client's.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openmono.llm._coerce import coerce_arguments
from openmono.llm._events import (
    Done,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallComplete,
    ToolCallDelta,
    Usage,
)
from openmono.llm._jsoncut import json_cut_off
from openmono.llm._messages import ToolSpec
from openmono.llm._wire import frame_error


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


@dataclass(slots=True)
class _Partial:
    id: str | None = None
    name: str | None = None
    args: list[str] = field(default_factory=list)


class TurnAssembler:
    """Accumulates one streamed turn. `started` turns true with the first token of any kind."""

    def __init__(self, tools: Sequence[ToolSpec] | None) -> None:
        self._schemas: dict[str, Mapping[str, Any]] = {t.name: t.parameters for t in tools or ()}
        self._calls: dict[int, _Partial] = {}
        self._usage: dict[str, Any] | None = None
        self._timings: dict[str, Any] | None = None
        self.finish_reason: str | None = None
        self.started = False

    def feed(self, chunk: Mapping[str, Any]) -> list[StreamEvent]:
        """Events for one decoded chunk; raises the mapped `LLMError` for an error object."""
        if "error" in chunk:
            raise frame_error(chunk["error"])
        out: list[StreamEvent] = []
        choices = chunk.get("choices") or ()
        for choice in choices[:1]:  # we never ask for n > 1
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning:
                out.append(ReasoningDelta(text=reasoning))
            content = delta.get("content")
            if content:
                out.append(TextDelta(text=content))
            for pos, tc in enumerate(delta.get("tool_calls") or ()):
                out.append(self._fragment(pos, tc))
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        if chunk.get("usage"):
            self._usage = chunk["usage"]
        if chunk.get("timings"):
            self._timings = chunk["timings"]
        if out:
            self.started = True
        return out

    def _fragment(self, pos: int, tc: Mapping[str, Any]) -> ToolCallDelta:
        index = tc.get("index")
        index = index if isinstance(index, int) else pos
        fn = tc.get("function") or {}
        partial = self._calls.setdefault(index, _Partial())
        call_id, name = tc.get("id") or None, fn.get("name") or None
        if call_id and not partial.id:
            partial.id = call_id
        if name and not partial.name:
            partial.name = name
        args = fn.get("arguments")
        if isinstance(args, dict):  # a few servers send an object instead of a JSON string
            args = json.dumps(args, ensure_ascii=False)
        args = args or ""
        partial.args.append(args)
        return ToolCallDelta(index=index, id=call_id, name=name, arguments=args)

    def finish(self) -> list[StreamEvent]:
        """The closing events: complete tool calls, usage, `Done`."""
        out: list[StreamEvent] = [self._complete(i, p) for i, p in sorted(self._calls.items())]
        if self._usage is not None or self._timings is not None:
            u = self._usage or {}
            details = u.get("prompt_tokens_details") or {}
            out.append(
                Usage(
                    prompt_tokens=int(u.get("prompt_tokens") or 0),
                    completion_tokens=int(u.get("completion_tokens") or 0),
                    cached_tokens=details.get("cached_tokens"),
                    timings=self._timings,
                )
            )
        out.append(Done(finish_reason=self.finish_reason))
        return out

    def _complete(self, index: int, p: _Partial) -> ToolCallComplete:
        raw = "".join(p.args)
        name = p.name or ""
        call_id = p.id or new_call_id()
        text = raw.strip()
        error: str | None = None
        truncated = False
        arguments = raw if text else "{}"
        try:
            parsed = json.loads(text) if text else {}
        except json.JSONDecodeError as exc:
            # Cut off by the token limit, or simply ending early: never apply half a call.
            if self.finish_reason == "length" or exc.pos >= len(text) or json_cut_off(text):
                truncated = True
                error = (
                    f"the {name or 'tool'} call was cut off before its arguments were complete "
                    "(output limit reached), so it was NOT run. Send it again, smaller."
                )
            else:
                error = f"the arguments of the {name or 'tool'} call are not valid JSON ({exc.msg})"
        else:
            if not isinstance(parsed, dict):
                error = f"the arguments of the {name or 'tool'} call must be a JSON object"
            elif name in self._schemas:
                coerced = coerce_arguments(parsed, self._schemas[name])
                if coerced != parsed:
                    arguments = json.dumps(coerced, ensure_ascii=False)
        if not name and error is None:
            error = "a tool call arrived without a tool name"
        return ToolCallComplete(
            index=index,
            id=call_id,
            name=name,
            arguments=arguments,
            truncated=truncated,
            error=error,
        )
