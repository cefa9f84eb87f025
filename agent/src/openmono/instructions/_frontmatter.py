"""Front matter: the `---` block at the top of a rule, skill, agent or command file.

The block is YAML for most writers, but not for all of them: Cursor writes `globs: **/*.go` and
`globs: *.ts, *.tsx` unquoted (a YAML alias and a YAML error), and other tools write descriptions
with a colon in them. So a block YAML cannot read is read again as plain `key: value` lines (a
value is taken as written, `true`/`false` and `[a, b]` and quotes aside; an indented `- item`
under an empty key is a list). Only a block that neither reading accepts is malformed: one
`FrontMatterError` naming the file and the first line that could not be read.

A file without a `---` first line has no front matter: all of it is the body.
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
    try:
        data = yaml.load("\n".join(head), Loader=_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError:
        return Document(_lines(file, head), body)
    if data is None:
        return Document({}, body)
    if not isinstance(data, dict):
        raise FrontMatterError(file, 2, "expected `key: value` lines")
    return Document({str(k): v for k, v in data.items()}, body)


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
    return value


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
