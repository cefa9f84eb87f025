"""The front matter of a PLAYBOOK.md, as pydantic models with the format's kebab-case names.

Field names follow the .NET OpenMono's format (`inline-prompt`, `output-schema`, `allowed-tools`,
`context-mode`, `trigger-patterns`, `user-invocable`, `argument-hint`); enumerations are matched
without regard to case (`confirm` = `Confirm`) and kept in the spelling the format documents.
Parameters may be written as a mapping (name → spec) or as a list of specs carrying a `name`.
Unknown top-level keys are kept and reported as warnings (a newer format must still load);
unknown keys inside a step or a parameter are errors, since there a typo silently changes meaning.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

ParamType = Literal["String", "Number", "Boolean", "Array"]
GateKind = Literal["None", "Confirm", "Review", "Approve"]
TriggerKind = Literal["manual", "auto", "both"]
ContextMode = Literal["shared", "isolated"]

SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
STEP_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
STATE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def _spelled(choices: tuple[str, ...]) -> BeforeValidator:
    """Accept any capitalisation of `choices`, keep the documented one."""
    by_lower = {c.lower(): c for c in choices}

    def fix(value: Any) -> Any:
        if value is None and "None" in choices:
            return "None"
        if isinstance(value, str):
            return by_lower.get(value.strip().lower(), value)
        return value

    return BeforeValidator(fix)


def _kebab(name: str) -> str:
    return name.replace("_", "-")


class _Strict(BaseModel):
    model_config = ConfigDict(
        alias_generator=_kebab, populate_by_name=True, extra="forbid", frozen=True
    )


class Parameter(_Strict):
    """One declared parameter; `min`/`max` bound a Number's value, a String's length or an
    Array's item count."""

    name: str
    type: Annotated[ParamType, _spelled(("String", "Number", "Boolean", "Array"))] = "String"
    required: bool = False
    default: Any = None
    hint: str | None = None
    description: str | None = None
    enum: list[Any] | None = None
    min: float | None = None
    max: float | None = None

    @model_validator(mode="after")
    def _bounds(self) -> Parameter:
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min:g}) is greater than max ({self.max:g})")
        return self


class Constraints(_Strict):
    """Rules injected into every step: files under the playbook folder and/or inline text."""

    file: list[str] = Field(default_factory=list)
    inline: list[str] = Field(default_factory=list)

    @field_validator("file", "inline", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else ([] if value is None else value)


class Step(_Strict):
    """One step: a prompt (inline or a file), what it needs first, its gate and its output."""

    id: str
    name: str | None = None
    description: str | None = None
    inline_prompt: str | None = None
    file: str | None = None
    requires: list[str] = Field(default_factory=list)
    gate: Annotated[GateKind, _spelled(("None", "Confirm", "Review", "Approve"))] = "None"
    output: str | None = None
    output_schema: str | None = None
    script: str | None = None

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not STEP_ID.match(value):
            raise ValueError("a step id is letters, digits, '-' and '_' (no spaces)")
        return value

    @field_validator("requires", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else ([] if value is None else value)

    @field_validator("output")
    @classmethod
    def _key(cls, value: str | None) -> str | None:
        if value is not None and not STATE_KEY.match(value):
            raise ValueError("a state key is letters, digits, '-' and '_', not starting a digit")
        return value

    @model_validator(mode="after")
    def _one_prompt(self) -> Step:
        if (self.inline_prompt is None) == (self.file is None):
            raise ValueError("a step needs exactly one of 'inline-prompt' and 'file'")
        return self


class FrontMatter(BaseModel):
    """The whole front matter (see the module docstring for what is lenient and what is not)."""

    model_config = ConfigDict(
        alias_generator=_kebab, populate_by_name=True, extra="allow", frozen=True
    )

    name: str
    version: str = "0.0.0"
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    trigger: Annotated[TriggerKind, _spelled(("manual", "auto", "both"))] = "manual"
    trigger_patterns: list[str] = Field(default_factory=list)
    user_invocable: bool = True
    argument_hint: str | None = None
    parameters: list[Parameter] = Field(default_factory=list)
    steps: list[Step] = Field(default_factory=list)
    constraints: Constraints = Field(default_factory=Constraints)
    allowed_tools: list[str] = Field(default_factory=lambda: ["*"])
    context_mode: Annotated[ContextMode, _spelled(("shared", "isolated"))] = "shared"

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME.match(value):
            raise ValueError("a playbook name is letters, digits, '.', '-' and '_' (no spaces)")
        return value

    @field_validator("version", mode="before")
    @classmethod
    def _version(cls, value: Any) -> Any:
        text = str(value) if isinstance(value, int | float) else value
        if isinstance(text, str) and not SEMVER.match(text):
            raise ValueError(f"{text!r} is not a semantic version (MAJOR.MINOR.PATCH)")
        return text

    @field_validator("tags", "trigger_patterns", "allowed_tools", mode="before")
    @classmethod
    def _listed(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("allowed_tools")
    @classmethod
    def _some_tools(cls, value: list[str]) -> list[str]:
        return value or ["*"]

    @field_validator("parameters", mode="before")
    @classmethod
    def _named(cls, value: Any) -> Any:
        # The mapping form: {name: spec}; a spec may be just a type name.
        if isinstance(value, dict):
            out = []
            for name, spec in value.items():
                spec = {"type": spec} if isinstance(spec, str) else dict(spec or {})
                out.append({"name": name, **spec})
            return out
        return [] if value is None else value

    @field_validator("constraints", mode="before")
    @classmethod
    def _constraints(cls, value: Any) -> Any:
        if value is None:
            return {}
        if isinstance(value, str | list):
            return {"inline": value}
        return value

    def unknown_keys(self) -> list[str]:
        return sorted(self.model_extra or {})
