"""Recover tool calls that a model wrote as text instead of as structured `tool_calls`.

Small and quantised models often ignore the server's tool-call grammar and write the call into the
answer. Three shapes are recognised, anywhere in the text (not inside `<think>` blocks):

    Qwen3 XML   <tool_call><function=NAME><parameter=KEY>value</parameter>...</function></tool_call>
                (the `<tool_call>` wrapper is optional)
    Hermes      <tool_call>{"name": NAME, "arguments": {...}}</tool_call>
    fenced JSON ```json {"name": NAME, "arguments": {...}} ```   ("parameters" is accepted too)

Every call found is either returned as a `TextCall` (arguments coerced with the tool's schema) or
as a `CallProblem` the model must be told about: an unknown tool name, a body that does not parse,
or a body that was cut off at the end of the stream (`truncated`; such a call is NEVER to be
applied, a half-written FileWrite would destroy a file). Nothing found is ever dropped silently.
The markup is removed from the returned text; a fenced block that is not exactly a call object
stays as text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from openmono.llm._coerce import coerce_arguments
from openmono.llm._jsoncut import json_cut_off

__all__ = ["TAG_MARKERS", "CallProblem", "Recovery", "TextCall", "recover_tool_calls"]

Format = Literal["qwen_xml", "hermes", "json_block"]
ProblemKind = Literal["unknown_tool", "truncated", "malformed"]

# Where a call written with tags starts; a fenced block (```) may hold one too.
TAG_MARKERS = ("<tool_call>", "<function=")
_START = re.compile("|".join(re.escape(m) for m in (*TAG_MARKERS, "```")))
_FENCE_LANGS = frozenset({"", "json", "tool_call", "tool_code", "javascript"})
_CALL_PREFIX = re.compile(r'\s*\{\s*"name"\s*:')
_NAME_IN_JSON = re.compile(r'"name"\s*:\s*"([^"\\]{1,200})"')
_FUNCTION_TAG = re.compile(r"<function=[A-Za-z_][\w.\-]{0,127}>")
_FUNCTION_TAG_CUT = re.compile(r"<function=[\w.\-]{0,128}")
_CALL_KEYS = frozenset({"name", "arguments", "parameters", "type", "id"})
_DECODER = json.JSONDecoder()


@dataclass(frozen=True, slots=True)
class TextCall:
    """A call recovered from the text, ready to validate and run."""

    name: str
    arguments: dict[str, Any]
    format: Format
    raw: str
    start: int = 0


@dataclass(frozen=True, slots=True)
class CallProblem:
    """A call-shaped piece of text that must not run; `message` is written for the model."""

    kind: ProblemKind
    name: str | None
    message: str
    format: Format
    raw: str
    start: int = 0

    @property
    def truncated(self) -> bool:
        return self.kind == "truncated"


@dataclass(slots=True)
class Recovery:
    """The text without call markup, the calls, and the problems (each list in text order);
    `removed` is where the markup was in the text, (start, end) spans in order."""

    text: str
    calls: list[TextCall] = field(default_factory=list)
    problems: list[CallProblem] = field(default_factory=list)
    removed: list[tuple[int, int]] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return bool(self.calls or self.problems)


def recover_tool_calls(
    text: str, tools: Sequence[Any] | None = None, *, tagged_only: bool = False
) -> Recovery:
    """Find text-written tool calls in `text`.

    `tools` are objects with `name` and `parameters` (JSON schema), e.g. `ToolSpec`s. With tools,
    names are checked (a case-only difference is fixed) and arguments coerced; without, any name is
    accepted and values stay as written. `tagged_only`: only `<tool_call>` blocks are calls (the
    prompted protocol's grammar allows calls there alone; a fence or tag in its prose is prose).
    """
    if tagged_only and "<tool_call>" not in text:
        return Recovery(text)
    if "<tool_call>" not in text and "<function=" not in text and "```" not in text:
        return Recovery(text)  # the common case: plain prose, one scan per marker
    return _Scanner(text, tools, tagged_only).run()


class _Scanner:
    def __init__(self, text: str, tools: Sequence[Any] | None, tagged_only: bool = False) -> None:
        self.text = text
        self.tagged_only = tagged_only
        self.schemas: dict[str, Mapping[str, Any] | None] = {}
        self.folded: dict[str, str] = {}
        for tool in tools or ():
            self.schemas[tool.name] = getattr(tool, "parameters", None)
            self.folded[tool.name.lower()] = tool.name
        self.out = Recovery("")
        self.think = _think_spans(text)

    def run(self) -> Recovery:
        text, pieces, pos, keep_from = self.text, [], 0, 0
        while True:
            m = _START.search(text, pos)
            if m is None:
                break
            start = m.start()
            skip_to = self._inside_think(start)
            if skip_to is not None:
                pos = skip_to
                continue
            tag = m.group()
            if self.tagged_only and tag != "<tool_call>":
                pos = m.end()
                continue
            if tag == "<tool_call>":
                call_end = self._tool_call(start)
                if call_end is None:  # prose mentioning the tag
                    pos = start + len("<tool_call>")
                    continue
                end = call_end
            elif tag == "<function=":
                if not _looks_like_function_tag(text, start):  # prose mentioning the syntax
                    pos = start + len("<function=")
                    continue
                end = self._function_block(start, len(text), standalone=True)
            else:
                fence_end = self._fence(start)
                if fence_end is None:  # an ordinary code block: keep it, go on after it
                    pos = self._fence_end(start)
                    continue
                end = fence_end
            pieces.append(text[keep_from:start])
            self.out.removed.append((start, end))
            keep_from = pos = end
        pieces.append(text[keep_from:])
        self.out.text = "".join(pieces).strip() if self.out.found else text
        return self.out

    # -- shapes ---------------------------------------------------------------------------------

    def _tool_call(self, start: int) -> int | None:
        text = self.text
        body_start = start + len("<tool_call>")
        close = text.find("</tool_call>", body_start)
        closed = close >= 0
        body_end = close if closed else len(text)
        end = close + len("</tool_call>") if closed else len(text)
        i = _skip_ws(text, body_start, body_end)
        if text.startswith("<function=", i):
            while text.startswith("<function=", i):
                i = self._function_block(i, body_end, standalone=False, closed_outer=closed)
                i = _skip_ws(text, i, body_end)
            return end
        raw = text[start:end]
        if i < body_end and text[i] == "{":
            self._json_call(text[i:body_end], raw, start, "hermes", closed)
        elif closed:
            self._problem("malformed", None, "hermes", raw, start, "an empty or unreadable body")
        elif i >= body_end or "<function=".startswith(text[i:body_end].rstrip()):
            self._problem("truncated", None, "hermes", raw, start)  # cut right after the tag
        else:
            return None  # an unclosed tag followed by prose: someone talking about the syntax
        return end

    def _function_block(
        self, start: int, limit: int, *, standalone: bool, closed_outer: bool = False
    ) -> int:
        """Parse `<function=NAME>...</function>` starting at `start`; returns where it ended."""
        text = self.text
        name_start = start + len("<function=")
        gt = text.find(">", name_start, limit)
        if gt < 0:
            self._problem("truncated", None, "qwen_xml", text[start:limit], start)
            return limit
        name = text[name_start:gt].strip()
        fclose = text.find("</function>", gt, limit)
        body_end = fclose if fclose >= 0 else limit
        end = fclose + len("</function>") if fclose >= 0 else limit
        if standalone and fclose >= 0:
            # A stray closing wrapper after an unwrapped function is markup too.
            j = _skip_ws(text, end, len(text))
            if text.startswith("</tool_call>", j):
                end = j + len("</tool_call>")
        raw = text[start:end]
        args: dict[str, Any] = {}
        i = gt + 1
        while True:
            p = text.find("<parameter=", i, body_end)
            if p < 0:
                break
            key_end = text.find(">", p, body_end)
            if key_end < 0:
                break
            key = text[p + len("<parameter=") : key_end].strip()
            v_start = key_end + 1
            v_end = text.find("</parameter>", v_start, body_end)
            nxt = v_end + len("</parameter>") if v_end >= 0 else -1
            if v_end < 0:  # tolerate a missing </parameter> when something else closes the value
                v_end = text.find("<parameter=", v_start, body_end)
                if v_end < 0:
                    if fclose < 0 and not closed_outer:
                        self._problem("truncated", name, "qwen_xml", raw, start)
                        return end
                    v_end = body_end
                nxt = v_end
            args[key] = _param_value(text[v_start:v_end])
            i = nxt
        if fclose < 0 and not closed_outer:
            # No </function> and nothing after it: the stream ended inside the call.
            self._problem("truncated", name or None, "qwen_xml", raw, start)
            return end
        self._accept(name, args, "qwen_xml", raw, start)
        return end

    def _fence(self, start: int) -> int | None:
        """A fenced block holding exactly one call object; None for any other code block."""
        text = self.text
        nl = text.find("\n", start + 3)
        if nl < 0:
            nl = len(text)
        lang = text[start + 3 : nl].strip().lower()
        if lang not in _FENCE_LANGS:
            return None
        close = text.find("```", nl)
        body = text[nl:close] if close >= 0 else text[nl:]
        if not _CALL_PREFIX.match(body):
            return None
        end = close + 3 if close >= 0 else len(text)
        raw = text[start:end]
        if close < 0:
            try:
                obj, _ = _DECODER.raw_decode(body.strip())
            except ValueError:
                self._problem("truncated", _name_guess(body), "json_block", raw, start)
                return end
            if not _is_call_object(obj):
                return None
        return end if self._json_call(body, raw, start, "json_block", close >= 0) else None

    def _fence_end(self, start: int) -> int:
        nl = self.text.find("\n", start + 3)
        if nl < 0:
            return len(self.text)
        close = self.text.find("```", nl)
        return len(self.text) if close < 0 else close + 3

    # -- helpers --------------------------------------------------------------------------------

    def _json_call(self, body: str, raw: str, start: int, fmt: Format, closed: bool) -> bool:
        """Parse a `{"name":..., "arguments":...}` body; False if it is not call-shaped at all."""
        s = body.strip()
        try:
            obj, _ = _DECODER.raw_decode(s)
        except json.JSONDecodeError as exc:
            name = _name_guess(s)
            if not closed or exc.pos >= len(s) or json_cut_off(s):
                self._problem("truncated", name, fmt, raw, start)
            else:
                self._problem("malformed", name, fmt, raw, start, f"invalid JSON ({exc.msg})")
            return True
        if not _is_call_object(obj):
            if fmt == "json_block":
                return False
            self._problem("malformed", None, fmt, raw, start, 'no "name" and "arguments" object')
            return True
        args = obj.get("arguments", obj.get("parameters", {}))
        if isinstance(args, str):  # some models double-encode the arguments
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                self._problem("malformed", obj["name"], fmt, raw, start, "arguments are not JSON")
                return True
        if args is None:
            args = {}
        if not isinstance(args, dict):
            self._problem("malformed", obj["name"], fmt, raw, start, "arguments are not an object")
            return True
        self._accept(obj["name"], args, fmt, raw, start)
        return True

    def _accept(self, name: str, args: dict[str, Any], fmt: Format, raw: str, start: int) -> None:
        if self.schemas:
            known = name if name in self.schemas else self.folded.get(name.lower())
            if known is None:
                self._problem("unknown_tool", name, fmt, raw, start)
                return
            name = known
            args = coerce_arguments(args, self.schemas[name])
        elif not name:
            self._problem("malformed", None, fmt, raw, start, "no tool name")
            return
        self.out.calls.append(TextCall(name, args, fmt, raw, start))

    def _problem(
        self,
        kind: ProblemKind,
        name: str | None,
        fmt: Format,
        raw: str,
        start: int,
        detail: str = "",
    ) -> None:
        what = f"the {name} call" if name else "a tool call"
        if kind == "truncated":
            msg = (
                f"{what} written as text was cut off before its end, so it was NOT run "
                "(nothing was changed). Send it again complete; split a large write into "
                "smaller edits."
            )
        elif kind == "unknown_tool":
            msg = f"there is no tool named {name!r}; available: {', '.join(sorted(self.schemas))}"
        else:
            msg = f"{what} written as text could not be read ({detail}); it was NOT run."
        self.out.problems.append(CallProblem(kind, name, msg, fmt, raw, start))

    def _inside_think(self, pos: int) -> int | None:
        for a, b in self.think:
            if a <= pos < b:
                return b
        return None


def _looks_like_function_tag(text: str, start: int) -> bool:
    """`<function=Name>`, or a tag cut off at the very end of the text (`<function=Na`)."""
    if _FUNCTION_TAG.match(text, start):
        return True
    return _FUNCTION_TAG_CUT.fullmatch(text, start) is not None


def _think_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    i = text.find("<think>")
    while i >= 0:
        j = text.find("</think>", i)
        end = len(text) if j < 0 else j + len("</think>")
        spans.append((i, end))
        i = text.find("<think>", end)
    return spans


def _skip_ws(text: str, i: int, limit: int) -> int:
    while i < limit and text[i] in " \t\r\n":
        i += 1
    return i


def _param_value(value: str) -> str:
    # The Qwen3 template puts the value on its own lines: drop exactly that one newline each side.
    if value.startswith("\n"):
        value = value[1:]
    if value.endswith("\n"):
        value = value[:-1]
    return value


def _is_call_object(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and isinstance(obj.get("name"), str)
        and ("arguments" in obj or "parameters" in obj)
        and obj.keys() <= _CALL_KEYS
    )


def _name_guess(body: str) -> str | None:
    m = _NAME_IN_JSON.search(body)
    return m.group(1) if m else None
