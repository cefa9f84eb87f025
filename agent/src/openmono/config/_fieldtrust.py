"""What each setting can do, declared on the field: which ones an untrusted project may set.

A project's `.openmono/settings.json` comes with the repository. Until the user trusts the
project, only what cannot hurt them applies from it. Every field of the settings model carries
one `Trust` in its `Annotated[...]` metadata (a test holds that none is missing):

    APPLIES  changes neither a permission nor where anything is sent (timeouts, the model name)
    NARROWS  only ever takes a permission away (deny and ask rules)
    WIDENS   can turn an ask into an allow or lift a guard (allow rules, yolo, the mode)
    ROUTES   names where the key, the prompt, tool calls or files go (a URL, a host, a CA, a
             folder outside the workspace)
    RUNS     names a command that runs on this machine (hooks, MCP servers)

A field that is a section (a settings model, or a mapping of them) without a `Trust` of its own
is decided field by field inside it. A WIDENS/ROUTES field may name the values that only narrow
(`yolo: false`, `mode: plan`): those apply untrusted too. `untrusted_view` is the one filter:
an allow-list, so a key it does not know (a typo, another spelling) is left out, never passed on.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

from openmono_contracts.facts import parse_switch
from pydantic import BaseModel
from pydantic.fields import FieldInfo

Kind = Literal["applies", "narrows", "widens", "routes", "runs"]


@dataclass(frozen=True)
class Trust:
    """What a setting can do (see the module docstring)."""

    kind: Kind
    # The values that only narrow (they apply from an untrusted project all the same).
    narrowing: Callable[[Any], bool] | None = None

    @property
    def waits(self) -> bool:
        """Whether a value from an untrusted project is left out."""
        return self.kind in ("widens", "routes", "runs")

    def keeps(self, value: Any) -> bool:
        return not self.waits or (self.narrowing is not None and self.narrowing(value))


def _off(value: Any) -> bool:
    try:
        return parse_switch(value) is False
    except ValueError:
        return False


APPLIES = Trust("applies")
NARROWS = Trust("narrows")
WIDENS = Trust("widens")
ROUTES = Trust("routes")
RUNS = Trust("runs")
WIDENS_UNLESS_OFF = Trust("widens", _off)
ROUTES_UNLESS_OFF = Trust("routes", _off)


def trust_of(field: FieldInfo) -> Trust | None:
    return next((m for m in field.metadata if isinstance(m, Trust)), None)


def _section(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """(the settings model a field holds, whether it is a mapping of them) or (None, False)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    origin = get_origin(annotation)
    if origin in (dict, Mapping):
        value = get_args(annotation)[-1]
        if isinstance(value, type) and issubclass(value, BaseModel):
            return value, True
    if origin in (Union, types.UnionType):
        models = [a for a in get_args(annotation) if a is not type(None)]
        if len(models) == 1:
            return _section(models[0])
    return None, False


def unclassified(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    """The dotted names of the fields (of `model` and its sections) that declare no `Trust`."""
    for name, field in model.model_fields.items():
        dotted = f"{prefix}{name}"
        if trust_of(field) is not None:
            continue
        section, _ = _section(field.annotation)
        if section is None:
            yield dotted
        else:
            yield from unclassified(section, f"{dotted}.")


def untrusted_view(
    model: type[BaseModel], data: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """What of `data` (a settings file's nested values) applies from an untrusted project, and
    the dotted keys left out."""
    kept: dict[str, Any] = {}
    left: list[str] = []
    _filter(model, data, "", kept, left)
    return kept, left


def _filter(
    model: type[BaseModel],
    data: Mapping[str, Any],
    prefix: str,
    kept: dict[str, Any],
    left: list[str],
) -> None:
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        field = model.model_fields.get(key)
        if field is None:
            left.append(dotted)
            continue
        trust = trust_of(field)
        if trust is not None:
            if trust.keeps(value):
                kept[key] = value
            elif value not in ({}, []):  # an empty section or list left out changes nothing
                left.append(dotted)
            continue
        section, many = _section(field.annotation)
        if section is None or not isinstance(value, Mapping):
            left.append(dotted)  # unclassified (a test rules it out) or not a section's shape
            continue
        if not many:
            inner: dict[str, Any] = {}
            _filter(section, value, f"{dotted}.", inner, left)
            if inner:
                kept[key] = inner
            continue
        entries: dict[str, Any] = {}
        for name, entry in value.items():
            if not isinstance(entry, Mapping):
                left.append(f"{dotted}.{name}")
                continue
            inner = {}
            _filter(section, entry, f"{dotted}.{name}.", inner, left)
            if inner:
                entries[name] = inner
        if entries:
            kept[key] = entries
