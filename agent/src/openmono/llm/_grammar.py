"""A GBNF grammar for the prompted protocol: plain text, then optionally well-formed tool calls.

llama-server takes a per-request `grammar` and only samples tokens it allows. This one allows

    root   ::= prose calls?
    prose  ::= any text that does not contain "<tool_" (neither a call nor a made-up result)
    calls  ::= 1 to MAX_CALLS blocks, each "<tool_call>\\n" call "\\n</tool_call>", and nothing
               after the last one (no invented <tool_response>, no chatter)
    call   ::= {"name": "<an offered tool>", "arguments": <that tool's arguments>}

and the arguments follow the tool's JSON schema: required keys present, optional ones allowed in
the schema's order, no other keys, values of the declared type (string, integer, number, boolean,
null, arrays, nested objects, `$ref`s to `$defs`, `anyOf`), enums spelt out, a string's
`minLength` and an integer's `minimum`/`maximum`, and an object's alternative forms (an `anyOf`
of `required` lists, as FileEdit's: each form's keys required, the other forms' left out). What a
schema does not say (a `maxLength`, old and new text that differ) is left to the tool's own
validation, which reports it to the model.

`prose` is a small automaton: a state per prefix of "<tool_" matched so far, so the text may hold
"<" and "<tool" but never "<tool_" outside a call. A small model that starts to invent a
`<tool_response>` is thereby steered into writing the call instead. Every call the model can
write under this grammar therefore parses, names an offered tool and has arguments of the right
shape.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from openmono.llm._calltext import CALL_CLOSE, CALL_OPEN
from openmono.llm._coerce import forms, resolve_ref
from openmono.llm._messages import ToolSpec

MAX_CALLS = 4
# Prose may not contain this: the common start of <tool_call> and <tool_response>.
PROSE_STOP = "<tool_"
# Digits allowed in an integer: enough for any count or size, short of a runaway number.
MAX_DIGITS = 15

_SHARED = {
    "ws": '" "?',
    "string": '"\\"" char* "\\""',
    "char": '[^"\\\\\\x7F\\x00-\\x1F] | "\\\\" (["\\\\/bfnrt] | "u" hex hex hex hex)',
    "hex": "[0-9a-fA-F]",
    "integer": f'"-"? ("0" | [1-9] [0-9]{{0,{MAX_DIGITS - 1}}})',
    "number": 'integer ("." [0-9]{1,15})? ([eE] [-+]? [0-9]{1,3})?',
    "boolean": '"true" | "false"',
    "null": '"null"',
    "value": "object | array | string | number | boolean | null",
    "object": '"{" ws (string ws ":" ws value (ws "," ws string ws ":" ws value)*)? ws "}"',
    "array": '"[" ws (value (ws "," ws value)*)? ws "]"',
}
_SIMPLE = {"string", "integer", "number", "boolean", "null"}


def literal(text: str) -> str:
    """`text` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _key(name: str) -> str:
    """An object key and its colon: `"\"name\"" ws ":" ws`."""
    return f'{literal(json.dumps(name))} ws ":" ws'


def _json_literal(value: Any) -> str:
    return literal(json.dumps(value, ensure_ascii=False))


def _prose_rules(tag: str) -> dict[str, str]:
    """Rules `prose-0 .. prose-{n-1}`: text that never completes `tag` (which starts with `<`
    and holds no other `<`, so on a mismatch the automaton falls back to state 0 or 1)."""
    assert tag.startswith("<") and "<" not in tag[1:]
    rules: dict[str, str] = {}
    last = len(tag) - 1
    for i, ch in enumerate(tag):
        alts = ["[^<] prose-0"] if i == 0 else [f"[^<{_class_char(ch)}] prose-0"]
        alts.append('"<" prose-1')
        if 0 < i < last:
            alts.append(f"{literal(ch)} prose-{i + 1}")
        rules[f"prose-{i}"] = "(" + " | ".join(alts) + ")?"
    return rules


def _class_char(ch: str) -> str:
    return "\\" + ch if ch in "]\\^-" else ch


class _Builder:
    def __init__(self) -> None:
        self.rules: dict[str, str] = {}
        self._names: dict[str, str] = {}

    def add(self, hint: str, body: str) -> str:
        """A rule with `body`, named after `hint`; an identical body reuses its rule."""
        if body in self._names:
            return self._names[body]
        base = re.sub(r"[^a-z0-9]+", "-", hint.lower()).strip("-") or "r"
        name, n = base, 1
        while name in self.rules or name in _SHARED:
            n += 1
            name = f"{base}-{n}"
        self.rules[name] = body
        self._names[body] = name
        return name

    def value(self, schema: Any, root: Mapping[str, Any], hint: str, depth: int = 0) -> str:
        """An expression (a rule name or an inline alternative) for values of `schema`."""
        if not isinstance(schema, Mapping) or depth > 8:
            return "value"
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = resolve_ref(schema, root)
            return self.value(target, root, ref.rsplit("/", 1)[-1], depth + 1)
        if "const" in schema:
            return _json_literal(schema["const"])
        if isinstance(schema.get("enum"), list):
            body = " | ".join(_json_literal(v) for v in schema["enum"])
            return self.add(f"{hint}-enum", body)
        branches = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(branches, list) and branches and forms(schema) is None:
            alts = [self.value(b, root, hint, depth + 1) for b in branches]
            return self.add(hint, " | ".join(dict.fromkeys(alts)))
        kind = schema.get("type")
        if isinstance(kind, list):
            alts = [self.value({**schema, "type": k}, root, hint, depth + 1) for k in kind]
            return self.add(hint, " | ".join(dict.fromkeys(alts)))
        if kind == "string" and int(schema.get("minLength") or 0) > 0:
            n = min(int(schema["minLength"]), 16)
            return self.add(f"string-{n}", f'"\\"" char{{{n}}} char* "\\""')
        if kind == "integer" and ("minimum" in schema or "maximum" in schema):
            return self.add(hint, int_range(schema.get("minimum"), schema.get("maximum")))
        if kind in _SIMPLE:
            return str(kind)
        if kind == "array":
            item = self.value(schema.get("items"), root, f"{hint}-item", depth + 1)
            return self.add(f"{hint}-list", f'"[" ws ({item} (ws "," ws {item})*)? ws "]"')
        if kind == "object" or "properties" in schema:
            return self.object(schema, root, hint, depth)
        return "value"

    def object(
        self, schema: Mapping[str, Any], root: Mapping[str, Any], hint: str, depth: int
    ) -> str:
        props = schema.get("properties")
        shapes = forms(schema)
        if shapes is not None and isinstance(props, Mapping):
            # one object per form: its keys required and not null, another form's left out
            alts = []
            for i, keys in enumerate(shapes):
                others = {k for j, o in enumerate(shapes) if j != i for k in o} - set(keys)
                kept = {
                    k: _given(v) if k in keys else v for k, v in props.items() if k not in others
                }
                alts.append(self.object({
                    "properties": kept, "required": [*(schema.get("required") or ()), *keys],
                }, root, f"{hint}-form{i}", depth))  # fmt: skip
            return self.add(f"{hint}-args", " | ".join(dict.fromkeys(alts)))
        if not isinstance(props, Mapping) or not props:
            closed = schema.get("additionalProperties") is False
            return self.add(f"{hint}-empty", '"{" ws "}"') if closed else "object"
        required = set(schema.get("required") or ())
        keys = list(props)
        pairs = [f"{_key(k)} {self.value(props[k], root, f'{hint}-{k}', depth + 1)}" for k in keys]
        # rest(i, first): the properties from i on; `first` = no comma before the next one.
        memo: dict[tuple[int, bool], str] = {}

        def rest(i: int, first: bool) -> str:
            if i == len(keys):
                return ""
            if (i, first) in memo:
                return memo[(i, first)]
            sep = "" if first else 'ws "," ws '
            take = f"{sep}{pairs[i]} {rest(i + 1, False)}".strip()
            if keys[i] in required:
                body = take
            else:
                skip = rest(i + 1, first)
                body = f"({take}) | ({skip})" if skip else f"({take})?"
            name = self.add(f"{hint}-{i}{'f' if first else ''}", body)
            memo[(i, first)] = name
            return name

        inner = rest(0, True)
        return self.add(f"{hint}-args", f'"{{" ws {inner} ws "}}"' if inner else '"{" ws "}"')


def _given(schema: Any) -> Any:
    """`schema` without its `null` branch (a form's key is given, not null)."""
    branches = schema.get("anyOf") if isinstance(schema, Mapping) else None
    if not isinstance(branches, list):
        return schema
    kept = [b for b in branches if not (isinstance(b, Mapping) and b.get("type") == "null")]
    if len(kept) == len(branches) or not kept:
        return schema
    rest = {k: v for k, v in schema.items() if k != "anyOf"}
    return {**rest, **kept[0]} if len(kept) == 1 else {**rest, "anyOf": kept}


def int_range(lo: Any, hi: Any) -> str:
    """Decimal integers in [lo, hi] (either bound may be None), no leading zeros."""
    low = int(lo) if isinstance(lo, int | float) else None
    high = int(hi) if isinstance(hi, int | float) else None
    if low is None or low < 0:
        if high is None:
            return "integer"
        low = 0 if low is None or high >= 0 else low
        if low < 0:
            return "integer"  # a range below zero: no tool has one, the plain rule will do
        negative = f'"-" [1-9] [0-9]{{0,{MAX_DIGITS - 2}}} | '
        return negative + _nonneg(0, high)
    return _nonneg(low, high)


def _nonneg(low: int, high: int | None) -> str:
    top = high if high is not None else 10**MAX_DIGITS - 1
    if low > top:
        return '"0"'  # an empty range; never in a real schema
    alts = []
    for width in range(len(str(low)), len(str(top)) + 1):
        a = max(low, 10 ** (width - 1) if width > 1 else 0)
        b = min(top, 10**width - 1)
        if a <= b:
            alts.append(_same_width(str(a), str(b)))
    return " | ".join(f"({x})" for x in alts)


def _same_width(a: str, b: str) -> str:
    """Digit strings of one width from `a` to `b` (a <= b)."""
    if a == b:
        return literal(a)
    if len(a) == 1:
        return f"[{a}-{b}]"
    rest = len(a) - 1
    if a[1:] == "0" * rest and b[1:] == "9" * rest:
        return f"[{a[0]}-{b[0]}] [0-9]{{{rest}}}"
    if a[0] == b[0]:
        return f"{literal(a[0])} ({_same_width(a[1:], b[1:])})"
    alts = [f"{literal(a[0])} ({_same_width(a[1:], '9' * rest)})"]
    if int(b[0]) - int(a[0]) > 1:
        alts.append(f"[{int(a[0]) + 1}-{int(b[0]) - 1}] [0-9]{{{rest}}}")
    alts.append(f"{literal(b[0])} ({_same_width('0' * rest, b[1:])})")
    return " | ".join(alts)


def tool_grammar(tools: Sequence[ToolSpec], prose: bool = True) -> str:
    """The GBNF grammar (see the module docstring) for calls to `tools`; without `prose` the
    reply is calls alone (the tool was picked first: `_pick`)."""
    b = _Builder()
    calls = []
    for tool in tools:
        args = b.object(tool.parameters, tool.parameters, tool.name, 0)
        name = literal(json.dumps(tool.name))
        body = f'"{{" ws {_key("name")} {name} ws "," ws {_key("arguments")} {args} ws "}}"'
        calls.append(b.add(f"call-{tool.name}", body))
    block = f"{literal(CALL_OPEN + chr(10))} ({' | '.join(calls)}) {literal(chr(10) + CALL_CLOSE)}"
    lines = [
        "root ::= prose-0 calls?" if prose else "root ::= calls",
        f'calls ::= block ("\\n" block){{0,{MAX_CALLS - 1}}}',
        f"block ::= {block}",
    ]
    if prose:
        lines += [f"{k} ::= {v}" for k, v in _prose_rules(PROSE_STOP).items()]
    lines += [f"{k} ::= {v}" for k, v in b.rules.items()]
    lines += [f"{k} ::= {v}" for k, v in _SHARED.items()]
    return "\n".join(lines) + "\n"
