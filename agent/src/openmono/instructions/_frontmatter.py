"""Front matter: the `---` block at the top of a rule, skill, agent or command file.

The block is YAML for most writers, but not for all of them: Cursor writes `globs: **/*.go` and
`globs: *.ts, *.tsx` unquoted (a YAML alias and a YAML error), and other tools write descriptions
with a colon in them. So a block YAML cannot read is read again as plain `key: value` lines (a
value is taken as written, `true`/`false` and `[a, b]` and quotes aside; an indented `- item`
under an empty key is a list). Only a block that neither reading accepts is malformed: one
`FrontMatterError` naming the file and the first line that could not be read.

A file without a `---` first line has no front matter: all of it is the body. A block of plain
`key: value` lines is read without the YAML loader (its constructor costs ~0.2 ms a block, and a
session may read hundreds), each value resolved by YAML's own resolver, so it means what YAML
would make of it; anything else (quotes, lists, nesting, comments) goes to YAML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from openmono.instructions._errors import FrontMatterError

# libyaml when the wheel has it: loading 250 small blocks takes ~10 ms instead of ~80 ms.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_KEY_LINE = re.compile(r"^([A-Za-z_][\w.-]*)\s*:(?:\s+(.*))?$")
_RESOLVER: Any = yaml.resolver.Resolver()
_INTEGER = re.compile(r"[-+]?[0-9]+")
# A plain value starting with one of these is YAML syntax (quotes, flow, anchors, tags, blocks).
_SYNTAX = tuple("[{&!|>@`%'\"")
_DELIMITERS = ("---", "...")


@dataclass(frozen=True)
class Document:
    """A file split in two: its front-matter fields and its body (stripped)."""

    fields: dict[str, Any] = field(default_factory=dict)
    body: str = ""


def parse(file: Path, text: str) -> Document:
    """Split `text` (the content of `file`) into fields and body; raises `FrontMatterError`."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return Document({}, text.lstrip("\ufeff").strip())
    for end in range(1, len(lines)):
        if lines[end].strip() in _DELIMITERS:
            break
    else:
        raise FrontMatterError(file, 1, "no closing '---' line")
    head, body = lines[1:end], "\n".join(lines[end + 1 :]).strip()
    plain = _plain(head)
    if plain is not None:
        return Document(plain, body)
    try:
        data = yaml.load("\n".join(head), Loader=_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError:
        return Document(_lines(file, head), body)
    if data is None:
        return Document({}, body)
    if not isinstance(data, dict):
        raise FrontMatterError(file, 2, "expected `key: value` lines")
    return Document({str(k): v for k, v in data.items()}, body)


def _plain(head: list[str]) -> dict[str, Any] | None:
    """The block when it is plain `key: value` lines (None: let YAML read it). A value starting
    with `*` is taken as written: in YAML it is an alias, and with no anchor in the block (an
    anchor is syntax, sent to YAML) it could only be an error, which Cursor's globs are not."""
    fields: dict[str, Any] = {}
    for line in head:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        found = _KEY_LINE.match(line.rstrip())
        if found is None:
            return None
        value = (found.group(2) or "").strip()
        if value.startswith(_SYNTAX) or ": " in value or " #" in value or value.endswith(":"):
            return None
        if not value or value.startswith("*"):
            fields[found.group(1)] = value or None
            continue
        tag = _RESOLVER.resolve(yaml.ScalarNode, value, (True, False)).rsplit(":", 1)[-1]
        if tag == "str":
            fields[found.group(1)] = value
        elif tag == "bool":
            fields[found.group(1)] = value.lower() in ("yes", "true", "on")
        elif tag == "null":
            fields[found.group(1)] = None
        elif tag == "int" and _INTEGER.fullmatch(value):
            fields[found.group(1)] = int(value)
        else:
            return None
    return fields


def _lines(file: Path, head: list[str]) -> dict[str, Any]:
    """The block read as `key: value` lines (see the module docstring); line 2 is its first."""
    fields: dict[str, Any] = {}
    key: str | None = None
    for number, raw in enumerate(head, start=2):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0].isspace() or line.startswith("- "):
            item = line.strip()
            listed = key is not None and (fields[key] is None or isinstance(fields[key], list))
            if not listed or not item.startswith("- "):
                raise FrontMatterError(file, number, f"cannot read {line.strip()!r}")
            fields[str(key)] = [*(fields[str(key)] or []), _scalar(item[2:])]
            continue
        found = _KEY_LINE.match(line)
        if found is None:
            raise FrontMatterError(file, number, f"expected `key: value`, found {line!r}")
        key, value = found.group(1), _uncomment(found.group(2) or "")
        fields[key] = _value(value) if value else None
    return fields


def _uncomment(value: str) -> str:
    """`**/*.go # go files` → `**/*.go` (YAML's comment: a `#` after white space)."""
    cut = re.search(r"\s#", value)
    return (value[: cut.start()] if cut else value).strip()


def _value(value: str) -> Any:
    if value.startswith("[") and value.endswith("]"):
        return [_scalar(v) for v in split_list(value[1:-1])]
    return _scalar(value)


def _scalar(value: str) -> Any:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    lowered = value.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("", "~", "null"):
        return None
    return int(value) if _INTEGER.fullmatch(value) else value


def split_list(text: str) -> list[str]:
    """`a, {b,c}, d` → ["a", "{b,c}", "d"]: commas inside braces or brackets do not split."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(text):
        if char in "{[":
            depth += 1
        elif char in "}]" and depth:
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]
