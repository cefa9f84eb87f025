"""A shell command read by a real bash parser (tree-sitter-bash), as far as it can be proven plain.

`parse(command)` gives the simple commands of a list or pipeline, each as its program and its
words after quote removal, and the redirections, or None when the command holds anything whose
effect cannot be read off the text:

- an expansion of any kind: `$VAR`, `${...}`, `$(...)`, backquotes, `$((...))`, `<(...)`,
  `$'...'`, brace expansion (`{a,b}`), a leading `~`;
- an assignment (`X=1 cmd`, `PAGER=sh git log`), a function definition, a subshell, a group,
  `if`/`for`/`while`/`case`, `!`, `[[ ]]`, `export`/`declare`/`local`;
- a here-document or here-string, a `<>` redirection;
- a syntax error (the parser's ERROR or MISSING nodes).

Globs (`*.py`) are allowed but marked on the word: what they expand to is not in the text (a file
named `--output=x` becomes a flag), so a caller decides whether a glob is acceptable.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import tree_sitter
import tree_sitter_bash

from openmono.permissions._errors import PermissionsError

_GLOB = frozenset("*?[")
# Structure nodes whose children are statements; anonymous tokens between them are operators.
_LISTS = frozenset({"program", "list", "pipeline"})
_CHAIN_TOKENS = frozenset({"&&", "||", "|", "|&", "&", ";", ";;", "\n"})
_WORDS = frozenset({"word", "number", "string", "raw_string", "concatenation"})


@dataclass(frozen=True)
class Word:
    """One argument after quote removal; `glob`: an unquoted `*`, `?` or `[` is in it."""

    text: str
    glob: bool = False


@dataclass(frozen=True)
class Command:
    """A simple command: its program, its words, and its source text (as written)."""

    name: str
    args: tuple[Word, ...]
    source: str


@dataclass(frozen=True)
class Redirect:
    """`op` as written (`>`, `>>`, `2>`, `&>`, `>&`, `<`, ...) and its target word."""

    op: str
    target: str
    fd: str = ""


@dataclass(frozen=True)
class Script:
    """What a plain command line does: its simple commands, in order, and its redirections."""

    commands: tuple[Command, ...]
    redirects: tuple[Redirect, ...]
    # more than one command, or one in the background: a list, a pipeline, `&`
    chained: bool


class _NotPlain(PermissionsError):
    """What makes a command not plain (never leaves this module)."""


@cache
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")


def _unescape_unquoted(raw: str) -> Word:
    """A bare word: `\\x` is a literal x; unescaped glob characters mark a glob."""
    out: list[str] = []
    glob = False
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw):
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        if c in "{}$`":
            raise _NotPlain(f"{c!r} in a word")
        if c in _GLOB:
            glob = True
        out.append(c)
        i += 1
    if out[:1] == ["~"]:
        raise _NotPlain("a leading ~")
    return Word("".join(out), glob)


def _unescape_double(raw: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(raw):
        if raw[i] == "\\" and i + 1 < len(raw) and raw[i + 1] in '\\"$`\n':
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(raw[i])
        i += 1
    return "".join(out)


def _word(node: tree_sitter.Node) -> Word:
    kind = node.type
    if kind == "number":
        return Word(_text(node))
    if kind == "word":
        return _unescape_unquoted(_text(node))
    if kind == "raw_string":
        return Word(_text(node)[1:-1])
    if kind == "string":
        parts = []
        for child in node.children:
            if child.type == "string_content":
                parts.append(_unescape_double(_text(child)))
            elif child.type != '"':
                raise _NotPlain(f"{child.type} inside double quotes")
        return Word("".join(parts))
    if kind == "concatenation":
        pieces = [_word(child) for child in node.children]
        return Word("".join(p.text for p in pieces), any(p.glob for p in pieces))
    raise _NotPlain(kind)


def _command(node: tree_sitter.Node, redirects: list[Redirect]) -> Command:
    name: Word | None = None
    args: list[Word] = []
    for child in node.children:
        if child.type == "command_name":
            if child.named_child_count != 1:
                raise _NotPlain("a compound command name")
            inner = child.named_children[0]
            name = _word(inner)
        elif child.type in _WORDS:
            args.append(_word(child))
        elif child.type == "file_redirect":
            redirects.append(_redirect(child))
        elif child.type == "comment":
            continue
        else:
            raise _NotPlain(child.type)
    if name is None or not name.text or name.glob:
        raise _NotPlain("no plain program name")
    return Command(name.text, tuple(args), _text(node))


def _redirect(node: tree_sitter.Node) -> Redirect:
    op = fd = ""
    target: str | None = None
    for child in node.children:
        if child.type == "file_descriptor":
            fd = _text(child)
        elif not child.is_named:
            op += _text(child)
        elif child.type in _WORDS:
            target = _word(child).text
        else:
            raise _NotPlain(f"{child.type} as a redirection target")
    if target is None or op in ("<>", ">|&"):
        raise _NotPlain(f"redirection {op}")
    return Redirect(op, target, fd)


def _walk(node: tree_sitter.Node, commands: list[Command], redirects: list[Redirect]) -> bool:
    """Collect the simple commands beneath `node`; True when it chains more than one."""
    kind = node.type
    if kind == "command":
        commands.append(_command(node, redirects))
        return False
    if kind == "redirected_statement":
        chained = False
        for child in node.children:
            if child.type == "file_redirect":
                redirects.append(_redirect(child))
            elif child.is_named and child.type != "comment":
                chained = _walk(child, commands, redirects) or chained
        return chained
    if kind in _LISTS:
        chained = kind != "program"
        statements = 0
        for child in node.children:
            if not child.is_named:
                if _text(child) not in _CHAIN_TOKENS:
                    raise _NotPlain(f"operator {_text(child)!r}")
                chained = chained or _text(child) == "&"
                continue
            if child.type == "comment":
                continue
            statements += 1
            chained = _walk(child, commands, redirects) or chained
        return chained or statements > 1
    raise _NotPlain(kind)


def parse(command: str) -> Script | None:
    """The plain reading of `command`, or None (see the module docstring)."""
    if not command.strip() or "\x00" in command:
        return None
    tree = _parser().parse(command.encode("utf-8"))
    root = tree.root_node
    if root.has_error:
        return None
    commands: list[Command] = []
    redirects: list[Redirect] = []
    try:
        chained = _walk(root, commands, redirects)
    except _NotPlain:
        return None
    if not commands:
        return None
    return Script(tuple(commands), tuple(redirects), chained)


def harmless_redirect(r: Redirect) -> bool:
    """Output thrown away (`>/dev/null`, `2>&1`, `&>/dev/null`) or an fd duplicated."""
    if r.op in (">&", "<&") and (r.target.isdigit() or r.target == "-"):
        return True
    return r.op in (">", ">>", "&>", "&>>", ">&") and r.target == "/dev/null"
