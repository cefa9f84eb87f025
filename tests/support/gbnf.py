"""A small GBNF recogniser, for unit tests of the grammars we send to llama-server.

It reads the subset `openmono.llm._grammar` writes (one rule per line; literals, character
classes with ranges, negation and \\x escapes, rule references, groups, `|`, `?`, `*`, `+`,
`{m}`, `{m,n}`) and answers whether a whole text is in the language of `root`. The real server
is the judge in the integration tests (`tests/integration/test_tool_grammar_llama.py`); this one
lets unit tests say which texts a grammar must refuse.

    Grammar(text).accepts('<tool_call>\\n{"name": ...}\\n</tool_call>')  # -> bool
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import cache

_ESC = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "]": "]", "[": "[", "^": "^"}


@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class Cls:
    ranges: tuple[tuple[str, str], ...]
    negated: bool

    def match(self, ch: str) -> bool:
        inside = any(a <= ch <= b for a, b in self.ranges)
        return inside != self.negated


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class Seq:
    items: tuple[object, ...]


@dataclass(frozen=True)
class Alt:
    options: tuple[object, ...]


@dataclass(frozen=True)
class Rep:
    item: object
    lo: int
    hi: int | None


class _Parser:
    def __init__(self, src: str) -> None:
        self.s, self.i = src, 0

    def ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in " \t":
            self.i += 1

    def alt(self) -> object:
        options = [self.seq()]
        self.ws()
        while self.i < len(self.s) and self.s[self.i] == "|":
            self.i += 1
            options.append(self.seq())
            self.ws()
        return options[0] if len(options) == 1 else Alt(tuple(options))

    def seq(self) -> object:
        items = []
        while True:
            self.ws()
            if self.i >= len(self.s) or self.s[self.i] in "|)":
                break
            items.append(self.postfix(self.atom()))
        return Seq(tuple(items))

    def atom(self) -> object:
        c = self.s[self.i]
        if c == '"':
            return self.literal()
        if c == "[":
            return self.char_class()
        if c == "(":
            self.i += 1
            inner = self.alt()
            assert self.s[self.i] == ")", self.s[self.i :]
            self.i += 1
            return inner
        m = re.compile(r"[a-zA-Z0-9-]+").match(self.s, self.i)
        assert m, f"cannot parse at {self.s[self.i :]!r}"
        self.i = m.end()
        return Ref(m.group())

    def char(self) -> str:
        c = self.s[self.i]
        if c != "\\":
            self.i += 1
            return c
        nxt = self.s[self.i + 1]
        if nxt == "x":
            self.i += 4
            return chr(int(self.s[self.i - 2 : self.i], 16))
        self.i += 2
        return _ESC.get(nxt, nxt)

    def literal(self) -> Lit:
        self.i += 1
        out = []
        while self.s[self.i] != '"':
            out.append(self.char())
        self.i += 1
        return Lit("".join(out))

    def char_class(self) -> Cls:
        self.i += 1
        negated = self.s[self.i] == "^"
        if negated:
            self.i += 1
        ranges = []
        while self.s[self.i] != "]":
            a = self.char()
            b = a
            if self.s[self.i] == "-" and self.s[self.i + 1] != "]":
                self.i += 1
                b = self.char()
            ranges.append((a, b))
        self.i += 1
        return Cls(tuple(ranges), negated)

    def postfix(self, item: object) -> object:
        if self.i >= len(self.s):
            return item
        c = self.s[self.i]
        if c in "?*+":
            self.i += 1
            return Rep(item, 1 if c == "+" else 0, 1 if c == "?" else None)
        if c == "{":
            m = re.compile(r"\{(\d+)(,(\d*))?\}").match(self.s, self.i)
            assert m
            self.i = m.end()
            lo = int(m.group(1))
            hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
            return Rep(item, lo, hi)
        return item


class Grammar:
    """Rules parsed from GBNF text; `accepts(text)` matches the whole text from `root`."""

    def __init__(self, text: str) -> None:
        self.rules: dict[str, object] = {}
        for line in text.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            name, body = line.split("::=", 1)
            parser = _Parser(body)
            self.rules[name.strip()] = parser.alt()
            parser.ws()
            assert parser.i == len(body), f"trailing text in rule {name}: {body[parser.i :]!r}"

    def accepts(self, text: str, start: str = "root") -> bool:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, 20_000))
        try:
            return len(text) in self._ends(text)(Ref(start), 0)
        finally:
            sys.setrecursionlimit(old)

    def _ends(self, text: str):  # type: ignore[no-untyped-def]
        rules = self.rules

        @cache
        def ends(node: object, pos: int) -> frozenset[int]:
            if isinstance(node, Lit):
                return (
                    frozenset({pos + len(node.text)})
                    if text.startswith(node.text, pos)
                    else frozenset()
                )
            if isinstance(node, Cls):
                ok = pos < len(text) and node.match(text[pos])
                return frozenset({pos + 1}) if ok else frozenset()
            if isinstance(node, Ref):
                return ends(rules[node.name], pos)
            if isinstance(node, Seq):
                here = frozenset({pos})
                for item in node.items:
                    here = frozenset(e for p in here for e in ends(item, p))
                    if not here:
                        break
                return here
            if isinstance(node, Alt):
                return frozenset(e for o in node.options for e in ends(o, pos))
            assert isinstance(node, Rep)
            out: set[int] = {pos} if node.lo == 0 else set()
            here, n = frozenset({pos}), 0
            while here and (node.hi is None or n < node.hi):
                here = frozenset(e for p in here for e in ends(node.item, p) if e != p)
                n += 1
                if n >= node.lo:
                    out |= here
            return frozenset(out)

        return ends
