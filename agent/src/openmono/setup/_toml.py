"""A small TOML writer for the frpc configuration (Python reads TOML but does not write it).

Covers what frpc configs use: strings, integers, booleans, floats, lists of scalars, nested
tables (written as dotted keys, the style of frp's own examples) and arrays of tables
(`[[proxies]]`). The output is read back with `tomllib` in the tests.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from openmono.setup._errors import SetupError


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        # A JSON string is a valid TOML basic string (same escapes, no raw control characters).
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list) and all(not isinstance(v, dict) for v in value):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    raise SetupError(f"cannot write {type(value).__name__} as a TOML value")


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _flat(prefix: str, table: Mapping[str, Any], out: list[str]) -> None:
    """`key = value` lines, nested tables as dotted keys."""
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            _flat(f"{name}.", value, out)
        elif not _is_table_array(value):
            out.append(f"{name} = {_scalar(value)}")


def dumps(data: Mapping[str, Any]) -> str:
    """`data` as TOML text: top-level keys first, then each array of tables."""
    lines: list[str] = []
    _flat("", data, lines)
    for key, value in data.items():
        if _is_table_array(value):
            for row in value:
                lines += ["", f"[[{key}]]"]
                _flat("", row, lines)
    return "\n".join(lines) + "\n"
