"""Playbook loading: every validation error names the file, the field and the step; parameters,
placeholders, discovery order, triggers and the shipped playbooks."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from openmono.config import record_project_trust
from openmono.playbooks import (
    BUILTIN_DIR,
    ParameterError,
    PlaybookInvalid,
    PlaybookNotFound,
    TemplateError,
    discover,
    load_playbook,
    match_trigger,
    parse_assignments,
    resolve_parameters,
)
from openmono.playbooks._template import render

GOOD_SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}


def write(
    folder: Path, front: str, body: str = "Body.", files: dict[str, str] | None = None
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    text = f"---\n{textwrap.dedent(front).strip()}\n---\n{body}\n"
    (folder / "PLAYBOOK.md").write_text(text)
    for rel, content in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(content)
    return folder


STEPS = """
steps:
  - id: a
    inline-prompt: do a
"""

# (case id, front matter, body, extra files, field, step, words in the message)
CASES: list[tuple[str, str, str, dict[str, str], str, str | None, str]] = [
    ("no-front-matter", "", "", {}, "front matter", None, "must start with"),
    ("bad-yaml", "name: x\nsteps: [a: b: c]", "", {}, "front matter", None, "invalid YAML"),
    ("not-a-mapping", "- a\n- b", "", {}, "front matter", None, "mapping"),
    ("missing-name", STEPS, "", {}, "name", None, "Field required"),
    ("bad-name", "name: two words" + STEPS, "", {}, "name", None, "no spaces"),
    ("bad-version", "name: x\nversion: '1.2'" + STEPS, "", {}, "version", None, "semantic"),
    ("bad-trigger", "name: x\ntrigger: sometimes" + STEPS, "", {}, "trigger", None, "manual"),
    (
        "bad-context-mode",
        "name: x\ncontext-mode: forked" + STEPS,
        "",
        {},
        "context-mode",
        None,
        "shared",
    ),
    ("no-steps", "name: x", "", {}, "steps", None, "at least one step"),
    (
        "step-no-prompt",
        "name: x\nsteps:\n  - id: a",
        "",
        {},
        "inline-prompt",
        "a",
        "exactly one of 'inline-prompt' and 'file'",
    ),
    (
        "step-both-prompts",
        "name: x\nsteps:\n  - id: a\n    inline-prompt: p\n    file: s.md",
        "",
        {"s.md": "p"},
        "inline-prompt",
        "a",
        "exactly one",
    ),
    (
        "step-unknown-field",
        "name: x\nsteps:\n  - id: a\n    inline-prompt: p\n    gaet: Confirm",
        "",
        {},
        "gaet",
        "a",
        "unknown field",
    ),
    (
        "step-bad-gate",
        "name: x\nsteps:\n  - id: a\n    inline-prompt: p\n    gate: Maybe",
        "",
        {},
        "gate",
        "a",
        "'Confirm'",
    ),
    (
        "step-bad-id",
        "name: x\nsteps:\n  - id: two words\n    inline-prompt: p",
        "",
        {},
        "id",
        "two words",
        "no spaces",
    ),
    (
        "step-empty-prompt",
        "name: x\nsteps:\n  - id: a\n    inline-prompt: '  '",
        "",
        {},
        "inline-prompt",
        "a",
        "empty",
    ),
    (
        "duplicate-step",
        "name: x\nsteps:\n  - {id: a, inline-prompt: p}\n  - {id: a, inline-prompt: q}",
        "",
        {},
        "id",
        "a",
        "two steps",
    ),
    (
        "unknown-requires",
        "name: x\nsteps:\n  - {id: a, inline-prompt: p, requires: [zz]}",
        "",
        {},
        "requires",
        "a",
        "no step with id 'zz'",
    ),
    (
        "self-requires",
        "name: x\nsteps:\n  - {id: a, inline-prompt: p, requires: a}",
        "",
        {},
        "requires",
        "a",
        "itself",
    ),
    (
        "cycle",
        "name: x\nsteps:\n  - {id: a, inline-prompt: p, requires: [c]}\n"
        "  - {id: b, inline-prompt: p, requires: [a]}\n"
        "  - {id: c, inline-prompt: p, requires: [b]}",
        "",
        {},
        "requires",
        "a",
        "cycle: a -> c -> b -> a",
    ),
    (
        "missing-step-file",
        "name: x\nsteps:\n  - {id: a, file: steps/a.md}",
        "",
        {},
        "file",
        "a",
        "no such file",
    ),
    (
        "step-file-outside",
        "name: x\nsteps:\n  - {id: a, file: ../../etc/passwd}",
        "",
        {},
        "file",
        "a",
        "outside the playbook folder",
    ),
    (
        "missing-script",
        "name: x\nsteps:\n  - {id: a, inline-prompt: p, script: scripts/s.sh}",
        "",
        {},
        "script",
        "a",
        "no such file",
    ),
    (
        "missing-schema",
        "name: x\nsteps:\n  - {id: a, inline-prompt: p, output-schema: o.json}",
        "",
        {},
        "output-schema",
        "a",
        "no such file",
    ),
    (
        "schema-not-json",
        "name: x\nsteps:\n  - {id: a, inline-prompt: p, output-schema: o.json}",
        "",
        {"o.json": "{nope"},
        "output-schema",
        "a",
        "not JSON",
    ),
    (
        "schema-invalid",
        "name: x\nsteps:\n  - {id: a, inline-prompt: p, output-schema: o.json}",
        "",
        {"o.json": json.dumps({"type": "nope"})},
        "output-schema",
        "a",
        "not a valid JSON Schema",
    ),
    (
        "bad-output-key",
        "name: x\nsteps:\n  - {id: a, inline-prompt: p, output: 9lives}",
        "",
        {},
        "output",
        "a",
        "state key",
    ),
    (
        "missing-constraints-file",
        "name: x\nconstraints: {file: c.md}" + STEPS,
        "",
        {},
        "constraints.file",
        None,
        "no such file",
    ),
    (
        "param-bad-type",
        "name: x\nparameters: {n: Integer}" + STEPS,
        "",
        {},
        "parameters.n.type",
        None,
        "'String'",
    ),
    (
        "param-unknown-field",
        "name: x\nparameters: {n: {type: String, regex: x}}" + STEPS,
        "",
        {},
        "parameters.n.regex",
        None,
        "unknown field",
    ),
    (
        "param-min-over-max",
        "name: x\nparameters: {n: {type: Number, min: 5, max: 1}}" + STEPS,
        "",
        {},
        "parameters.n",
        None,
        "greater than max",
    ),
    (
        "param-bad-default",
        "name: x\nparameters: {n: {type: Number, default: lots}}" + STEPS,
        "",
        {},
        "parameters.n.default",
        None,
        "not a number",
    ),
    (
        "param-default-not-in-enum",
        "name: x\nparameters: {n: {type: String, default: c, enum: [a, b]}}" + STEPS,
        "",
        {},
        "parameters.n.default",
        None,
        "not one of",
    ),
    (
        "param-default-out-of-range",
        "name: x\nparameters: {n: {type: Number, default: 9, max: 3}}" + STEPS,
        "",
        {},
        "parameters.n.default",
        None,
        "above max",
    ),
    (
        "param-twice",
        "name: x\nparameters:\n  - {name: n}\n  - {name: n}" + STEPS,
        "",
        {},
        "parameters.n",
        None,
        "declared twice",
    ),
    (
        "unknown-placeholder",
        "name: x\nsteps:\n  - {id: a, inline-prompt: 'hi {{user}}'}",
        "",
        {},
        "inline-prompt",
        "a",
        "unknown placeholder",
    ),
    (
        "undeclared-parameter",
        "name: x\nsteps:\n  - {id: a, inline-prompt: '{{parameters.q}}'}",
        "",
        {},
        "inline-prompt",
        "a",
        "no parameter 'q'",
    ),
    (
        "state-from-no-step",
        "name: x\nsteps:\n  - {id: a, inline-prompt: '{{state.r}}'}",
        "",
        {},
        "inline-prompt",
        "a",
        "no earlier step has 'output: r'",
    ),
    (
        "state-from-later-step",
        "name: x\nsteps:\n  - {id: a, inline-prompt: '{{state.r}}'}\n"
        "  - {id: b, inline-prompt: p, output: r}",
        "",
        {},
        "inline-prompt",
        "a",
        "no earlier step",
    ),
    (
        "state-in-body",
        STEPS.replace("steps:", "name: x\nsteps:"),
        "Use {{state.a}}",
        {},
        "body",
        None,
        "cannot use state",
    ),
    (
        "undeclared-parameter-in-step-file",
        "name: x\nsteps:\n  - {id: a, file: s.md}",
        "",
        {"s.md": "{{parameters.nope}}"},
        "file",
        "a",
        "no parameter 'nope'",
    ),
    (
        "empty-shell",
        "name: x\nsteps:\n  - {id: a, inline-prompt: '{{shell: }}'}",
        "",
        {},
        "inline-prompt",
        "a",
        "no command",
    ),
]


@pytest.mark.parametrize(
    ("front", "body", "files", "field", "step", "words"),
    [pytest.param(*c[1:], id=c[0]) for c in CASES],
)
def test_every_validation_error_names_file_field_and_step(
    tmp_path: Path,
    front: str,
    body: str,
    files: dict[str, str],
    field: str,
    step: str | None,
    words: str,
) -> None:
    folder = tmp_path / "pb"
    if front:
        write(folder, front, body or "Body.", files)
    else:
        folder.mkdir()
        (folder / "PLAYBOOK.md").write_text("# no front matter\n")
    with pytest.raises(PlaybookInvalid) as caught:
        load_playbook(folder)
    err = caught.value
    assert err.file == folder.resolve() / "PLAYBOOK.md"
    assert err.field == field, str(err)
    assert err.step == step, str(err)
    assert words in str(err)
    assert str(folder.resolve() / "PLAYBOOK.md") in str(err)
    if step:
        assert f"step {step!r}" in str(err)


def test_a_complete_playbook_loads_in_dependency_order(tmp_path: Path) -> None:
    folder = write(
        tmp_path / "full",
        """
        name: full
        version: 2.1.0-rc.1
        description: everything
        tags: deploy
        trigger: Both
        trigger-patterns: ["deploy *"]
        user-invocable: false
        argument-hint: "[env]"
        author: someone
        parameters:
          env: {type: string, required: true, enum: [dev, prod]}
          count: {type: Number, default: 2, min: 1, max: 5}
        steps:
          - {id: check, file: steps/check.md, requires: [plan], output: checked}
          - {id: plan, inline-prompt: "plan {{parameters.env}}", output: plan, gate: confirm}
          - {id: go, inline-prompt: "go {{state.plan}} {{state.checked}}", requires: [check],
             output-schema: templates/o.json, script: scripts/s.sh, gate: REVIEW}
        constraints: {file: constraints/c.md, inline: [Be careful.]}
        allowed-tools: [FileRead, "Bash"]
        context-mode: Isolated
        """,
        "System for {{parameters.env}}.\n{{constraints}}",
        {
            "steps/check.md": "check {{state.plan}}",
            "templates/o.json": json.dumps(GOOD_SCHEMA),
            "scripts/s.sh": "echo hi",
            "constraints/c.md": "Never push.",
        },
    )
    pb = load_playbook(folder)
    assert [s.id for s in pb.order] == ["plan", "check", "go"]
    assert pb.step("plan").gate == "Confirm" and pb.step("go").gate == "Review"
    assert pb.front.context_mode == "isolated" and pb.front.trigger == "both"
    assert pb.front.tags == ["deploy"] and not pb.front.user_invocable
    assert pb.schemas["go"] == GOOD_SCHEMA
    assert pb.scripts["go"].name == "s.sh"
    assert pb.constraints == "- Never push.\n- Be careful."
    assert pb.warnings == [f"{folder.resolve() / 'PLAYBOOK.md'}: unknown field 'author' ignored"]
    assert [p.type for p in pb.front.parameters] == ["String", "Number"]


PARAMS = """
name: p
parameters:
  env: {type: String, required: true, enum: [dev, prod], hint: where to deploy}
  count: {type: Number, default: 2, min: 1, max: 5}
  dry: {type: Boolean, default: false}
  files: {type: Array, max: 2}
  note: {type: String, max: 5}
steps:
  - {id: a, inline-prompt: "{{parameters.env}} {{parameters.note}}"}
"""


@pytest.mark.parametrize(
    ("given", "field", "words"),
    [
        ({}, "parameters.env", "required, and no value was given (where to deploy)"),
        ({"env": "test"}, "parameters.env", '"test" is not one of "dev", "prod"'),
        ({"env": "dev", "count": "many"}, "parameters.count", "not a number"),
        ({"env": "dev", "count": "0"}, "parameters.count", "below min 1"),
        ({"env": "dev", "count": 9}, "parameters.count", "above max 5"),
        ({"env": "dev", "dry": "perhaps"}, "parameters.dry", "not a boolean"),
        ({"env": "dev", "files": "a,b,c"}, "parameters.files", "number of items (3) is above"),
        ({"env": "dev", "files": "[1,"}, "parameters.files", "not a JSON list"),
        ({"env": "dev", "note": "too long"}, "parameters.note", "length (8) is above max 5"),
        ({"env": "dev", "other": "x"}, "parameters.other", "no such parameter"),
        ({"env": ["dev"]}, "parameters.env", "expected a string"),
    ],
)
def test_parameter_values_are_checked_before_anything_runs(
    tmp_path: Path, given: dict[str, Any], field: str, words: str
) -> None:
    pb = load_playbook(write(tmp_path / "p", PARAMS))
    with pytest.raises(ParameterError) as caught:
        resolve_parameters(pb.file, pb.front.parameters, given)
    assert caught.value.field == field
    assert words in str(caught.value)
    assert str(pb.file) in str(caught.value)


def test_parameter_values_are_coerced(tmp_path: Path) -> None:
    pb = load_playbook(write(tmp_path / "p", PARAMS))
    given = parse_assignments(["env=prod", "count=3", "dry=yes", "files=a, b"])
    values = resolve_parameters(pb.file, pb.front.parameters, given)
    assert values == {"env": "prod", "count": 3, "dry": True, "files": ["a", "b"], "note": None}
    assert resolve_parameters(pb.file, pb.front.parameters, {"env": "dev", "files": '["x"]'})[
        "files"
    ] == ["x"]
    with pytest.raises(ValueError, match="NAME=VALUE"):
        parse_assignments(["novalue"])


async def test_rendering_an_unknown_key_is_an_error_not_an_empty_string() -> None:
    async def shell(command: str) -> str:
        return f"<{command}>"

    kw: dict[str, Any] = {"constraints": "- c", "shell": shell}
    text = "{{parameters.a}} {{state.r.x}} {{constraints}} {{shell:ls -1}} {{state.n}}"
    out = await render(text, parameters={"a": "A"}, state={"r": {"x": 1}, "n": True}, **kw)
    assert out == "A 1 - c <ls -1> true"
    with pytest.raises(TemplateError, match="no state key 'zz'"):
        await render("{{state.zz}}", parameters={}, state={"r": 1}, **kw)
    with pytest.raises(TemplateError, match="has no key 'y'"):
        await render("{{state.r.y}}", parameters={}, state={"r": {"x": 1}}, **kw)
    with pytest.raises(TemplateError, match="no parameter 'b'"):
        await render("{{parameters.b}}", parameters={"a": 1}, state={}, **kw)


def test_discovery_project_beats_user_beats_builtin(tmp_path: Path) -> None:
    ws, data = tmp_path / "ws", tmp_path / "data"
    project = ws / ".openmono" / "playbooks"
    write(project / "commit", "name: commit\ndescription: mine" + STEPS)
    write(data / "playbooks" / "notes", "name: release-notes\ndescription: user's" + STEPS)
    write(project / "broken", "name: broken\nsteps: 3")
    untrusted = discover(ws, data, trusted=False)
    assert untrusted.playbooks["commit"].source == "builtin"
    assert untrusted.untrusted == [project / "broken", project / "commit"]
    catalog = discover(ws, data, trusted=True)
    assert catalog.playbooks["commit"].source == "project"
    assert catalog.playbooks["commit"].front.description == "mine"
    assert [p.source for p in catalog.playbooks["commit"].shadows] == ["builtin"]
    assert catalog.playbooks["release-notes"].source == "user"
    assert catalog.playbooks["fix-failing-tests"].source == "builtin"
    assert {p.source for p in catalog.shadowed} == {"builtin"}
    assert "broken" in catalog.errors
    with pytest.raises(PlaybookInvalid, match="steps"):
        catalog.get("broken")
    with pytest.raises(PlaybookNotFound, match="known: commit"):
        catalog.get("nope")


def test_the_shipped_playbooks_are_valid() -> None:
    names = sorted(p.name for p in BUILTIN_DIR.iterdir() if (p / "PLAYBOOK.md").is_file())
    assert names == ["commit", "fix-failing-tests", "release-notes"]
    for name in names:
        pb = load_playbook(BUILTIN_DIR / name, "builtin")
        assert pb.warnings == []
        assert any(s.gate != "None" for s in pb.order), name
        assert pb.schemas, name


def test_auto_trigger_strong_runs_weak_suggests(tmp_path: Path) -> None:
    auto = load_playbook(
        write(
            tmp_path / "a", "name: a\ntrigger: auto\ntrigger-patterns: ['commit *', deploy]" + STEPS
        )
    )
    manual = load_playbook(write(tmp_path / "m", "name: m\ntrigger-patterns: ['*']" + STEPS))
    strong = match_trigger("Commit   the fix", [manual, auto])
    assert strong is not None and strong.strength == "strong" and strong.playbook is auto
    weak = match_trigger("could you deploy it now", [auto])
    assert weak is not None and weak.strength == "weak"
    assert match_trigger("hello there", [auto, manual]) is None


def test_check_takes_names_as_run_does_and_paths(tmp_path: Path, clean_env: Path) -> None:
    """`playbook check commit` checks the shipped playbook (it answered "Path 'commit' does not
    exist"); folders and PLAYBOOK.md files still work, and a broken one is exit code 2."""
    from click.testing import CliRunner
    from openmono.cli import main

    ws = tmp_path / "ws"
    own = write(
        ws / ".openmono" / "playbooks" / "mine", "name: mine\nsteps: [{id: a, inline-prompt: x}]"
    )
    broken = write(tmp_path / "broken", "name: broken\nsteps: []")
    record_project_trust(ws, True, [])

    def check(*targets: str) -> Any:
        return CliRunner().invoke(main, ["-C", str(ws), "playbook", "check", *targets])

    by_name = check("commit", "mine")
    assert by_name.exit_code == 0, by_name.output
    assert "ok: commit 1.0.0" in by_name.output and str(BUILTIN_DIR) in by_name.output
    assert "ok: mine" in by_name.output
    by_path = check(str(own), str(own / "PLAYBOOK.md"))
    assert by_path.exit_code == 0 and by_path.output.count("ok: mine") == 2, by_path.output
    bad = check("no-such-playbook", str(broken), "./missing/dir")
    assert bad.exit_code == 2
    assert "no playbook named 'no-such-playbook' (known:" in bad.output
    assert "a playbook needs at least one step" in bad.output
    assert "./missing/dir: no such file or directory" in bad.output
    assert "Traceback" not in bad.output
