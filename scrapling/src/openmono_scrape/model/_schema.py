"""The `json` format's schema: checked before any model call, and every answer checked against it.

A schema is refused (400) when it is not a valid JSON Schema (the message names the path inside
the schema), when it is too big, or when it refers to a schema outside itself: `$ref` is resolved
offline only, so a schema never makes this service fetch anything.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema_rs

from openmono_scrape.errors import BadRequest

MAX_SCHEMA_BYTES = 32 * 1024
_MAX_PROBLEMS = 5


def _where(path: list[str | int]) -> str:
    return "/" + "/".join(str(p) for p in path) if path else "(top level)"


def _bad(field: str, where: str, why: str) -> BadRequest:
    message = f"Bad Request: {field}: invalid JSON Schema at {where}: {why}"
    return BadRequest(message, [{"path": [field, where], "message": why}])


def checked(schema: Any, field: str) -> jsonschema_rs.Validator:
    """A validator for `schema`; `BadRequest` naming `field` and the schema path otherwise."""
    if not isinstance(schema, dict):
        raise _bad(field, "(top level)", "a schema is a JSON object")
    if len(json.dumps(schema)) > MAX_SCHEMA_BYTES:
        raise _bad(field, "(top level)", f"the schema is over {MAX_SCHEMA_BYTES} bytes")
    try:
        jsonschema_rs.meta.validate(schema)
        return jsonschema_rs.validator_for(schema, offline=True)
    except jsonschema_rs.ValidationError as exc:
        first = exc.message.splitlines()[0] if exc.message else "invalid"
        raise _bad(field, _where(exc.instance_path), first) from None
    except (jsonschema_rs.ReferencingError, ValueError) as exc:
        raise _bad(field, "(top level)", str(exc).splitlines()[0]) from None


def problems(validator: jsonschema_rs.Validator, value: Any) -> list[str]:
    """What is wrong with `value` for the schema (empty: it is valid)."""
    found = []
    for error in validator.iter_errors(value):
        found.append(f"at {_where(error.instance_path)}: {error.message}")
        if len(found) >= _MAX_PROBLEMS:
            break
    return found
