"""Parameter values: parsed from `--param k=v` (or a tool call's JSON), coerced to the declared
type and checked against `required`, `enum`, `min` and `max` before anything runs.

Coercion from text: Number accepts `3`, `2.5`; Boolean `true/false/yes/no/on/off/1/0`; Array a
JSON list (`["a","b"]`) or comma-separated words (`a,b`). `min`/`max` bound a Number's value, a
String's length and an Array's item count. A declared parameter left out with no default is
present and empty (so `{{parameters.X}}` renders as nothing, on purpose); an undeclared one is an
error.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from openmono_contracts.facts import FALSY, TRUTHY

from openmono.playbooks._errors import ParameterError, ValueInvalid
from openmono.playbooks._model import Parameter


def parse_assignments(items: Iterable[str]) -> dict[str, str]:
    """`["scope=api", "dry=true"]` → {"scope": "api", "dry": "true"}."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ValueInvalid(f"--param {item!r}: write it as NAME=VALUE")
        out[name.strip()] = value
    return out


def _coerce(spec: Parameter, value: Any) -> Any:
    """`value` as the declared type; ValueError with a short reason."""
    if spec.type == "String":
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueInvalid(f"expected a string, got {type(value).__name__}")
        return str(value)
    if spec.type == "Number":
        if isinstance(value, bool):
            raise ValueInvalid("expected a number, got a boolean")
        if isinstance(value, int | float):
            number: float | int = value
        elif isinstance(value, str):
            try:
                number = int(value.strip())
            except ValueError:
                try:
                    number = float(value.strip())
                except ValueError:
                    raise ValueInvalid(f"{value!r} is not a number") from None
        else:
            raise ValueInvalid(f"expected a number, got {type(value).__name__}")
        if isinstance(number, float) and not math.isfinite(number):
            raise ValueInvalid(f"{value!r} is not a finite number")
        return number
    if spec.type == "Boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in TRUTHY | FALSY:
            return value.strip().lower() in TRUTHY
        raise ValueInvalid(f"{value!r} is not a boolean (true/false)")
    # Array
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except ValueError as exc:
                raise ValueInvalid(f"not a JSON list: {exc}") from None
        else:
            value = [part.strip() for part in text.split(",") if part.strip()]
    if not isinstance(value, list):
        raise ValueInvalid(f"expected a list, got {type(value).__name__}")
    return value


def _bounds(spec: Parameter, value: Any) -> None:
    if spec.type == "Number":
        measure, what = float(value), "the value"
    elif spec.type == "String":
        measure, what = float(len(value)), "the length"
    elif spec.type == "Array":
        measure, what = float(len(value)), "the number of items"
    else:
        return
    if spec.min is not None and measure < spec.min:
        raise ValueInvalid(f"{what} ({measure:g}) is below min {spec.min:g}")
    if spec.max is not None and measure > spec.max:
        raise ValueInvalid(f"{what} ({measure:g}) is above max {spec.max:g}")


def check_value(spec: Parameter, value: Any) -> Any:
    """The coerced value, or ValueError saying why it does not fit `spec`."""
    coerced = _coerce(spec, value)
    if spec.enum is not None:
        items = coerced if spec.type == "Array" else [coerced]
        allowed = [_coerce(spec, e) if spec.type != "Array" else e for e in spec.enum]
        for item in items:
            if item not in allowed:
                choices = ", ".join(json.dumps(a) for a in allowed)
                raise ValueInvalid(f"{json.dumps(item)} is not one of {choices}")
    _bounds(spec, coerced)
    return coerced


def resolve_parameters(
    file: Path, declared: Sequence[Parameter], given: Mapping[str, Any]
) -> dict[str, Any]:
    """Every declared parameter's value for one run (see the module docstring)."""
    by_name = {p.name: p for p in declared}
    for name in given:
        if name not in by_name:
            known = ", ".join(by_name) or "none"
            raise ParameterError(
                file, f"parameters.{name}", f"no such parameter (declared: {known})"
            )
    values: dict[str, Any] = {}
    for spec in declared:
        field = f"parameters.{spec.name}"
        if spec.name in given:
            raw, origin = given[spec.name], "value"
        elif spec.default is not None:
            raw, origin = spec.default, "default"
        elif spec.required:
            hint = f" ({spec.hint})" if spec.hint else ""
            raise ParameterError(
                file, field, f"required, and no value was given{hint}: --param {spec.name}=..."
            )
        else:
            values[spec.name] = None
            continue
        try:
            values[spec.name] = check_value(spec, raw)
        except ValueError as exc:
            raise ParameterError(file, field, f"bad {origin}: {exc}") from None
    return values
