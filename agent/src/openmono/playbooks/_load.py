"""Load one playbook directory: parse PLAYBOOK.md, validate it whole, before anything runs.

Checked, each failure one `PlaybookInvalid` naming the file, the field and the step:
    1. front matter: YAML between `---` lines, a mapping, fields as `_model` declares them
    2. steps: unique ids; `requires` names known steps and has no cycle (the run order is the
       listed order, moved only where `requires` demands it)
    3. files: a step's `file`, `script`, `output-schema` and the constraint files exist inside
       the playbook folder; an output schema is JSON and a valid JSON Schema
    4. parameters: unique names; each default fits its own declaration
    5. placeholders: every `{{...}}` is of a known kind, names a declared parameter, and a
       `{{state.X}}` is the `output` of a step that runs earlier (the body, rendered once before
       the first step, may not use state)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import jsonschema_rs
import yaml
from pydantic import ValidationError

from openmono.playbooks._errors import PlaybookInvalid, TemplateError
from openmono.playbooks._model import FrontMatter, Step
from openmono.playbooks._params import check_value
from openmono.playbooks._template import scan

FILE_NAME = "PLAYBOOK.md"
Source = Literal["project", "user", "builtin"]


@dataclass
class Playbook:
    """A validated playbook, with every file it names already read."""

    front: FrontMatter
    body: str
    folder: Path
    source: Source
    order: list[Step]
    prompts: dict[str, str]
    schemas: dict[str, dict[str, Any]]
    scripts: dict[str, Path]
    constraints: str
    warnings: list[str] = field(default_factory=list)
    # the playbooks of the same name from lower sources that this one hides (`_discover`)
    shadows: list[Playbook] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.front.name

    @property
    def file(self) -> Path:
        return self.folder / FILE_NAME

    def step(self, step_id: str) -> Step:
        return next(s for s in self.order if s.id == step_id)


def split_front_matter(file: Path, text: str) -> tuple[dict[str, Any], str]:
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise PlaybookInvalid(file, "front matter", "the file must start with a '---' line")
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            head, body = "".join(lines[1:i]), "".join(lines[i + 1 :])
            break
    else:
        raise PlaybookInvalid(file, "front matter", "no closing '---' line")
    try:
        data = yaml.safe_load(head)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise PlaybookInvalid(file, "front matter", f"invalid YAML{where}: {problem}") from None
    if not isinstance(data, dict):
        raise PlaybookInvalid(file, "front matter", "must be a YAML mapping (key: value lines)")
    return data, body.strip()


def _pydantic_error(file: Path, data: dict[str, Any], exc: ValidationError) -> PlaybookInvalid:
    first = exc.errors()[0]
    loc = list(first["loc"])
    step = None
    if len(loc) >= 2 and loc[0] == "steps" and isinstance(loc[1], int):
        raw = data.get("steps") or []
        entry = raw[loc[1]] if loc[1] < len(raw) else None
        step_id = entry.get("id") if isinstance(entry, dict) else None
        step = str(step_id) if step_id is not None else f"#{loc[1] + 1}"
        # A rule over the whole step is the prompt rule (exactly one of inline-prompt and file).
        loc = loc[2:] or ["inline-prompt"]
    elif len(loc) >= 2 and loc[0] == "parameters" and isinstance(loc[1], int):
        params = FrontMatter._named(data.get("parameters"))
        entry = params[loc[1]] if isinstance(params, list) and loc[1] < len(params) else None
        name = entry.get("name") if isinstance(entry, dict) else None
        loc = ["parameters", str(name) if name else f"#{loc[1] + 1}", *loc[2:]]
    where = ".".join(str(p) for p in loc if not isinstance(p, int)) or "front matter"
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        message = "unknown field"
    more = len(exc.errors()) - 1
    if more:
        message += f" (and {more} more problem{'s' if more > 1 else ''})"
    return PlaybookInvalid(file, where, message, step=step)


def _inside(folder: Path, file: Path, rel: str, field_name: str, step: str | None) -> Path:
    path = (folder / rel).resolve()
    if not path.is_relative_to(folder.resolve()):
        raise PlaybookInvalid(
            file, field_name, f"{rel!r} is outside the playbook folder", step=step
        )
    if not path.is_file():
        raise PlaybookInvalid(file, field_name, f"{rel!r}: no such file", step=step)
    return path


def _read(path: Path, file: Path, field_name: str, step: str | None) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PlaybookInvalid(
            file, field_name, f"cannot read {path.name}: {exc}", step=step
        ) from None


def run_order(file: Path, steps: list[Step]) -> list[Step]:
    """The listed order, moved only where `requires` demands it; unknown ids and cycles fail."""
    by_id: dict[str, Step] = {}
    for step in steps:
        if step.id in by_id:
            raise PlaybookInvalid(file, "id", "two steps have this id", step=step.id)
        by_id[step.id] = step
    for step in steps:
        for need in step.requires:
            if need not in by_id:
                raise PlaybookInvalid(
                    file, "requires", f"no step with id {need!r} (steps: {', '.join(by_id)})",
                    step=step.id,
                )  # fmt: skip
            if need == step.id:
                raise PlaybookInvalid(
                    file, "requires", "a step cannot require itself", step=step.id
                )
    placed: list[Step] = []
    done: set[str] = set()
    left = list(steps)
    while left:
        ready = next((s for s in left if all(n in done for n in s.requires)), None)
        if ready is None:
            cycle = _cycle(left)
            raise PlaybookInvalid(
                file, "requires", "dependency cycle: " + " -> ".join(cycle), step=cycle[0]
            )
        placed.append(ready)
        done.add(ready.id)
        left.remove(ready)
    return placed


def _cycle(left: list[Step]) -> list[str]:
    needs = {s.id: [n for n in s.requires if any(o.id == n for o in left)] for s in left}
    path: list[str] = []
    current = left[0].id
    while current not in path:
        path.append(current)
        current = needs[current][0]
    return [*path[path.index(current) :], current]


def _check_placeholders(
    file: Path, text: str, params: set[str], state: set[str] | None, what: str, step: str | None
) -> None:
    try:
        found = scan(text)
    except TemplateError as exc:
        raise PlaybookInvalid(file, what, str(exc), step=step) from None
    for p in found:
        if p.kind == "parameters" and p.key not in params:
            known = ", ".join(sorted(params)) or "none"
            raise PlaybookInvalid(
                file, what, f"{p.raw}: no parameter {p.key!r} is declared (declared: {known})",
                step=step,
            )  # fmt: skip
        if p.kind == "state":
            head = p.key.split(".")[0]
            if state is None:
                raise PlaybookInvalid(
                    file, what, f"{p.raw}: the body is rendered before any step, so it cannot "
                    "use state", step=step,
                )  # fmt: skip
            if head not in state:
                earlier = ", ".join(sorted(state)) or "none"
                raise PlaybookInvalid(
                    file, what, f"{p.raw}: no earlier step has 'output: {head}' (earlier "
                    f"outputs: {earlier})", step=step,
                )  # fmt: skip


def _schema(path: Path, file: Path, step: str) -> dict[str, Any]:
    try:
        schema = json.loads(_read(path, file, "output-schema", step))
    except ValueError as exc:
        raise PlaybookInvalid(
            file, "output-schema", f"{path.name} is not JSON: {exc}", step=step
        ) from None
    if not isinstance(schema, dict):
        raise PlaybookInvalid(file, "output-schema", f"{path.name} is not a JSON object", step=step)
    try:
        jsonschema_rs.meta.validate(schema)
    except jsonschema_rs.ValidationError as exc:
        first = str(exc).splitlines()[0]
        raise PlaybookInvalid(
            file, "output-schema", f"{path.name} is not a valid JSON Schema: {first}", step=step
        ) from None
    return schema


def load_playbook(folder: Path, source: Source = "project") -> Playbook:
    """Load and validate the playbook in `folder` (see the module docstring)."""
    folder = folder.resolve()
    file = folder / FILE_NAME
    if not file.is_file():
        raise PlaybookInvalid(file, "file", "no PLAYBOOK.md in this folder")
    data, body = split_front_matter(file, _read(file, file, "file", None))
    try:
        front = FrontMatter.model_validate(data)
    except ValidationError as exc:
        raise _pydantic_error(file, data, exc) from None
    warnings = [f"{file}: unknown field {k!r} ignored" for k in front.unknown_keys()]
    if not front.steps:
        raise PlaybookInvalid(file, "steps", "a playbook needs at least one step")
    # 4. parameters
    names: set[str] = set()
    for spec in front.parameters:
        where = f"parameters.{spec.name}"
        if spec.name in names:
            raise PlaybookInvalid(file, where, "declared twice")
        names.add(spec.name)
        bare = spec.model_copy(update={"enum": None})
        for value in spec.enum or () if spec.type != "Array" else ():
            try:
                check_value(bare, value)
            except ValueError as exc:
                raise PlaybookInvalid(file, f"{where}.enum", str(exc)) from None
        if spec.default is not None:
            try:
                check_value(spec, spec.default)
            except ValueError as exc:
                raise PlaybookInvalid(file, f"{where}.default", str(exc)) from None
    # 2. steps and their order
    order = run_order(file, front.steps)
    # 3. files
    texts: list[str] = []
    for rel in front.constraints.file:
        texts.append(
            _read(
                _inside(folder, file, rel, "constraints.file", None), file, "constraints.file", None
            ).strip()
        )
    texts += [t.strip() for t in front.constraints.inline if t.strip()]
    constraints = "\n".join(f"- {t}" if "\n" not in t else t for t in texts)
    prompts: dict[str, str] = {}
    schemas: dict[str, dict[str, Any]] = {}
    scripts: dict[str, Path] = {}
    for step in order:
        if step.file is not None:
            prompts[step.id] = _read(
                _inside(folder, file, step.file, "file", step.id), file, "file", step.id
            )
        else:
            prompts[step.id] = step.inline_prompt or ""
        if not prompts[step.id].strip():
            raise PlaybookInvalid(
                file,
                "inline-prompt" if step.file is None else "file",
                "the prompt is empty",
                step=step.id,
            )
        if step.output_schema is not None:
            path = _inside(folder, file, step.output_schema, "output-schema", step.id)
            schemas[step.id] = _schema(path, file, step.id)
        if step.script is not None:
            scripts[step.id] = _inside(folder, file, step.script, "script", step.id)
    # 5. placeholders
    _check_placeholders(file, body, names, None, "body", None)
    _check_placeholders(file, constraints, names, None, "constraints", None)
    produced: set[str] = set()
    for step in order:
        what = "file" if step.file is not None else "inline-prompt"
        _check_placeholders(file, prompts[step.id], names, produced, what, step.id)
        if step.output:
            produced.add(step.output)
    return Playbook(
        front=front,
        body=body,
        folder=folder,
        source=source,
        order=order,
        prompts=prompts,
        schemas=schemas,
        scripts=scripts,
        constraints=constraints,
        warnings=warnings,
    )
