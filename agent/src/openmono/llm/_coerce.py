"""Coerce loosely typed tool arguments to a tool's JSON schema.

Models that write tool calls as text (Qwen3 XML above all) give every parameter as a string, and
even native calls sometimes carry `"5"` for an integer or a JSON array serialised into a string.
We fix what is unambiguous, guided by the schema pydantic derived for the tool: integers,
numbers, booleans ("true"/"false"), null, arrays and objects given as JSON text, and numbers given
where a string is wanted. Anything else is left as it was, so schema validation downstream reports
it to the model with the real value rather than a guess of ours.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_INT = re.compile(r"[+-]?\d+")
_BOOLS = {"true": True, "false": False}


def coerce_arguments(args: dict[str, Any], schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """`args` with each value coerced to its property's schema (unknown keys untouched)."""
    if not schema:
        return args
    out = _coerce(args, schema, schema)
    return out if isinstance(out, dict) else args


def resolve_ref(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """What a `{"$ref": "#/$defs/X"}` schema points to in `root`; any other schema as it is (a
    ref that points nowhere too)."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part) if isinstance(node, Mapping) else None
        if isinstance(node, Mapping):
            return node
    return schema


def forms(schema: Mapping[str, Any]) -> list[list[str]] | None:
    """An object's alternative forms, each the keys it requires: an `anyOf` whose branches only
    name required keys (FileEdit: `old_string` and `new_string`, or `edits`); None otherwise."""
    branches = schema.get("anyOf")
    if "properties" not in schema or not isinstance(branches, list) or not branches:
        return None
    if not all(isinstance(b, Mapping) and set(b) == {"required"} for b in branches):
        return None
    return [list(b["required"]) for b in branches]


def _types(schema: Mapping[str, Any], root: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The alternatives a value may take: anyOf/oneOf branches or the schema itself (an object's
    forms are one object)."""
    schema = resolve_ref(schema, root)
    if forms(schema) is not None:
        return [schema]
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list):
        return [resolve_ref(b, root) for b in branches if isinstance(b, Mapping)]
    t = schema.get("type")
    if isinstance(t, list):
        return [{**schema, "type": one} for one in t]
    return [schema]


def _coerce(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> Any:
    branches = _types(schema, root)
    kinds = [b.get("type") for b in branches]
    if isinstance(value, str):
        if "string" in kinds or not any(kinds):
            return value  # a string is acceptable as it is
        for branch in branches:
            ok, converted = _from_string(value, branch, root)
            if ok:
                return converted
        return value
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        if "integer" in kinds or "number" in kinds:
            if "integer" in kinds and isinstance(value, float) and value.is_integer():
                return int(value)
            return value
        if "string" in kinds:
            return json.dumps(value)
        return value
    if isinstance(value, list):
        for branch in branches:
            if branch.get("type") == "array":
                items = branch.get("items")
                if isinstance(items, Mapping):
                    return [_coerce(v, items, root) for v in value]
        return value
    if isinstance(value, dict):
        for branch in branches:
            props = branch.get("properties")
            if branch.get("type") == "object" and isinstance(props, Mapping):
                return {
                    k: _coerce(v, props[k], root) if isinstance(props.get(k), Mapping) else v
                    for k, v in value.items()
                }
        return value
    return value


def _from_string(text: str, branch: Mapping[str, Any], root: Mapping[str, Any]) -> tuple[bool, Any]:
    kind = branch.get("type")
    s = text.strip()
    if kind == "integer":
        if _INT.fullmatch(s):
            return True, int(s)
        try:
            f = float(s)
        except ValueError:
            return False, None
        return (True, int(f)) if f.is_integer() else (False, None)
    if kind == "number":
        try:
            f = float(s)
        except ValueError:
            return False, None
        return True, int(f) if _INT.fullmatch(s) else f
    if kind == "boolean":
        b = _BOOLS.get(s.lower())
        return (b is not None), b
    if kind == "null":
        return (s.lower() in ("null", "none", "")), None
    if kind in ("array", "object"):
        try:
            parsed = json.loads(s)
        except ValueError:
            return False, None
        want = list if kind == "array" else dict
        if isinstance(parsed, want):
            return True, _coerce(parsed, branch, root)
    return False, None
