"""Playbooks run through a real session against the scripted OpenAI-compatible server (real HTTP +
SSE) and the real tools: gates, state, output-schema correction, checkpoints and resume,
allowed-tools, the `Playbook` tool and the CLI."""

from __future__ import annotations

import asyncio
import json
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from openmono.agent import Agent
from openmono.cli import main
from openmono.config import record_project_trust
from openmono.loop import LoopEvent
from openmono.playbooks import (
    GateRequest,
    Host,
    PlaybookRunner,
    ResumeError,
    RunState,
    approve_all,
    discover,
)

from tests.support.agents import OpenAgent
from tests.support.scripted_llm import Call, ScriptedLLM, Turn

pytestmark = pytest.mark.integration

KEY = "scripted-key"
SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["name", "count"],
    "additionalProperties": False,
}

THREE = """
name: three
version: 1.0.0
description: look, change, report
parameters:
  target: {type: String, required: true}
steps:
  - id: look
    inline-prompt: "Look at {{parameters.target}}; {{shell:echo shell-$((40+2))}}"
    script: scripts/info.sh
    output: findings
  - id: change
    requires: [look]
    gate: Confirm
    inline-prompt: "Change it using {{state.findings}}"
    output: change
  - id: report
    requires: [change]
    inline-prompt: "Report {{state.change}}"
constraints: {inline: Never push.}
"""


def add_playbook(ws: Path, front: str, body: str = "", files: dict[str, str] | None = None) -> str:
    name = front.split("name:", 1)[1].split()[0]
    folder = ws / ".openmono" / "playbooks" / name
    folder.mkdir(parents=True)
    (folder / "PLAYBOOK.md").write_text(f"---\n{textwrap.dedent(front).strip()}\n---\n{body}\n")
    for rel, content in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(content)
    return name


def add_three(ws: Path) -> str:
    return add_playbook(
        ws,
        THREE,
        "You are the three playbook for {{parameters.target}}.",
        {"scripts/info.sh": '#!/usr/bin/env bash\necho "target is $PLAYBOOK_TARGET"\n'},
    )


@pytest.fixture
def ws(tmp_path: Path, clean_env: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    record_project_trust(root, True, [])  # its own playbooks load
    return root


@pytest.fixture
def agent_overrides() -> dict[str, Any]:
    return {"llm.api_key": KEY, "tool_timeout_s": 60}


def runner_for(
    agent: Agent, ws: Path, name: str, gate: Any, events: list[LoopEvent]
) -> PlaybookRunner:
    data = ws.parent / "data"
    return PlaybookRunner(
        discover(ws, data).get(name),
        Host.of(agent.loop, agent.store.root / agent.session_id, data),
        gate,
        events.append,
    )


def last_user(request: dict[str, Any]) -> str:
    return str([m for m in request["messages"] if m["role"] == "user"][-1]["content"])


class RecordingGate:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[GateRequest] = []

    async def __call__(self, request: GateRequest) -> bool:
        self.asked.append(request)
        return self.answer


async def test_three_steps_with_a_confirm_gate_approved(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    name = add_three(ws)
    llm = scripted_llm(
        [
            Turn(tool_calls=[Call("FileRead", {"file_path": "calc.py"})]),
            Turn(text="add subtracts"),
            Turn(text="changed add"),
            Turn(text="all good"),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    agent = await open_with(llm)
    gate, events = RecordingGate(True), []
    result = await runner_for(agent, ws, name, gate, events).run({"target": "calc.py"})
    assert result.ok, result.message
    assert result.run.completed == ["look", "change", "report"]
    assert result.run.state == {"findings": "add subtracts", "change": "changed add"}
    requests = [r.json for r in llm.chat_requests]
    assert len(requests) == 4
    system = requests[0]["messages"][0]["content"]
    assert system.startswith("You are the three playbook for calc.py.")
    first = last_user(requests[0])
    assert first.startswith("Look at calc.py; shell-42")
    assert "target is calc.py" in first
    assert first.endswith("Constraints (always apply):\n- Never push.")
    assert last_user(requests[2]).startswith("Change it using add subtracts")
    # shared context: the second step sees the first one's conversation
    assert any(m.get("content") == "add subtracts" for m in requests[2]["messages"])
    assert [(g.step, g.kind, g.phase) for g in gate.asked] == [("change", "Confirm", "before")]
    assert gate.asked[0].text.startswith("Change it using add subtracts")
    saved = RunState.model_validate_json(result.checkpoint.read_text())
    assert saved.status == "done" and saved.completed == result.run.completed
    assert saved.transcript and Path(saved.transcript).is_file()


async def test_three_steps_with_a_confirm_gate_denied(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    name = add_three(ws)
    llm = scripted_llm([Turn(text="add subtracts")], api_key=KEY, n_ctx=32768)
    agent = await open_with(llm)
    gate, events = RecordingGate(False), []
    result = await runner_for(agent, ws, name, gate, events).run({"target": "calc.py"})
    assert result.status == "denied"
    assert "the Confirm gate of step 'change' was denied" in result.message
    assert len(llm.chat_requests) == 1  # the gated step never reached the model
    saved = RunState.model_validate_json(result.checkpoint.read_text())
    assert (saved.status, saved.completed, saved.stopped_at) == ("denied", ["look"], "change")


SHAPE = """
name: shape
steps:
  - id: extract
    inline-prompt: "Give the name and the count."
    output-schema: out.schema.json
    output: shape
"""


async def test_output_schema_prose_then_json_after_the_correction(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    name = add_playbook(ws, SHAPE, files={"out.schema.json": json.dumps(SCHEMA)})
    llm = scripted_llm(
        [
            Turn(text="Sure! The name is x and the count is 3."),
            Turn(text='{"name": "x", "count": 3}'),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    agent = await open_with(llm)
    result = await runner_for(agent, ws, name, approve_all, []).run()
    assert result.ok, result.message
    assert result.run.state == {"shape": {"name": "x", "count": 3}}
    first, correction = (r.json for r in llm.chat_requests)
    assert "response_format" not in first
    assert correction["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "extract", "schema": SCHEMA, "strict": True},
    }
    assert "tools" not in correction
    assert "What was wrong" in last_user(correction)
    assert any(
        m.get("content") == "Sure! The name is x and the count is 3."
        for m in correction["messages"]
    )


async def test_output_schema_still_wrong_after_the_correction_fails_the_step(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    name = add_playbook(ws, SHAPE, files={"out.schema.json": json.dumps(SCHEMA)})
    llm = scripted_llm([Turn(text="prose"), Turn(text='{"name": "x"}')], api_key=KEY, n_ctx=32768)
    agent = await open_with(llm)
    result = await runner_for(agent, ws, name, approve_all, []).run()
    assert result.status == "failed"
    assert "even after the correction" in result.message and "count" in result.message
    assert result.run.completed == []


async def test_an_interrupted_run_resumes_from_its_checkpoint(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    name = add_three(ws)
    llm = scripted_llm(
        [Turn(text="add subtracts"), Turn(text="never seen", delay_s=30)], api_key=KEY, n_ctx=32768
    )
    agent = await open_with(llm)
    runner = runner_for(agent, ws, name, approve_all, [])
    task = asyncio.ensure_future(runner.run({"target": "calc.py"}))
    async with asyncio.timeout(20):
        while len(llm.chat_requests) < 2:  # step 2's request is at the server
            await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    saved = RunState.model_validate_json(runner.checkpoint.read_text())
    assert (saved.status, saved.completed, saved.stopped_at) == ("stopped", ["look"], "change")

    llm.add(Turn(text="changed add"), Turn(text="all good"))
    again = runner_for(agent, ws, name, approve_all, [])
    with pytest.raises(ResumeError, match="keeps the parameters"):
        await again.run({"target": "other.py"}, resume=True)
    result = await again.run(resume=True)
    assert result.ok, result.message
    assert result.run.run_id == saved.run_id
    assert result.run.completed == ["look", "change", "report"]
    resumed = [r.json for r in llm.chat_requests[2:]]
    assert len(resumed) == 2  # step 1 did not run again
    first = last_user(resumed[0])
    assert first.startswith(
        "(This run was resumed. Steps done earlier, with their results:\n- look: add subtracts"
    )
    assert "Change it using add subtracts" in first
    with pytest.raises(ResumeError, match="nothing to resume"):
        await runner_for(agent, ws, name, approve_all, []).run(resume=True)


async def test_a_failed_step_stops_the_run_and_resume_retries_it(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    name = add_three(ws)
    llm = scripted_llm([Turn(text="add subtracts"), Turn.http_error(400)], api_key=KEY, n_ctx=32768)
    agent = await open_with(llm)
    result = await runner_for(agent, ws, name, approve_all, []).run({"target": "calc.py"})
    assert result.status == "failed" and "step 'change' stopped: error" in result.message
    llm.add(Turn(text="changed add"), Turn(text="all good"))
    result = await runner_for(agent, ws, name, approve_all, []).run(resume=True)
    assert result.ok and len(llm.chat_requests) == 4


async def test_allowed_tools_are_the_only_ones_offered_and_run(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    name = add_playbook(
        ws, "name: narrow\nallowed-tools: [FileRead]\nsteps:\n  - {id: a, inline-prompt: go}"
    )
    llm = scripted_llm(
        [Turn(tool_calls=[Call("Bash", {"command": "echo hi"})]), Turn(text="could not")],
        api_key=KEY,
        n_ctx=32768,
    )
    agent = await open_with(llm, yolo=True)
    result = await runner_for(agent, ws, name, approve_all, []).run()
    assert result.ok
    first, second = (r.json for r in llm.chat_requests)
    assert {t["function"]["name"] for t in first["tools"]} == {"FileRead"}
    refusal = [m for m in second["messages"] if m["role"] == "tool"][-1]["content"]
    assert "the playbook 'narrow' does not allow the tool 'Bash'" in refusal


async def test_the_model_runs_a_playbook_with_the_playbook_tool(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    add_playbook(
        ws,
        "name: solo\nparameters: {x: Number}\nsteps:\n"
        "  - {id: a, inline-prompt: 'x is {{parameters.x}}', output: answer}",
    )
    add_playbook(ws, "name: gated\nsteps:\n  - {id: a, inline-prompt: go, gate: Approve}")
    llm = scripted_llm(
        [
            Turn(tool_calls=[Call("Playbook", {"name": "solo", "parameters": {"x": "4"}})]),
            Turn(text="solo done"),
            Turn(tool_calls=[Call("Playbook", {"name": "gated"})]),
            Turn(text="finished"),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    agent = await open_with(llm, allow=("Playbook",))
    done = await agent.run_turn("run solo, then gated")
    assert done.text == "finished"
    parent, child, after_solo, after_gated = (r.json for r in llm.chat_requests)
    assert "Playbook" in {t["function"]["name"] for t in parent["tools"]}
    assert not {"Playbook", "Agent"} & {t["function"]["name"] for t in child["tools"]}
    assert last_user(child).startswith("x is 4")
    solo = [m for m in after_solo["messages"] if m["role"] == "tool"][-1]["content"]
    assert "playbook solo finished (1 steps)" in solo and '"answer": "solo done"' in solo
    gated = [m for m in after_gated["messages"] if m["role"] == "tool"][-1]["content"]
    assert "Approve gate" in gated and "non-interactive" in gated


def test_cli_gate_stops_a_non_interactive_run_then_resume_with_yes(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path
) -> None:
    name = add_three(ws)
    llm = scripted_llm(
        [Turn(text="add subtracts"), Turn(text="changed add"), Turn(text="all good")],
        api_key=KEY,
        n_ctx=32768,
    )
    base = ["--endpoint", llm.url, "--api-key", KEY, "-C", str(ws), "playbook", "run", name]
    missing = CliRunner().invoke(main, base)
    assert missing.exit_code == 2 and "parameters.target" in missing.output
    stopped = CliRunner().invoke(main, [*base, "--param", "target=calc.py"])
    assert stopped.exit_code == 3, stopped.output
    assert "has a Confirm gate and this run is non-interactive: pass --yes" in stopped.output
    assert len(llm.chat_requests) == 1
    done = CliRunner().invoke(main, [*base, "--resume", "--yes"])
    assert done.exit_code == 0, done.output
    assert "playbook three finished (3 steps)" in done.output
    assert len(llm.chat_requests) == 3
    listed = CliRunner().invoke(main, ["-C", str(ws), "playbook", "list"])
    assert listed.exit_code == 0 and "three" in listed.output and "commit" in listed.output


REVIEWED = """
name: reviewed
context-mode: isolated
steps:
  - {id: draft, inline-prompt: "Draft it.", output: draft}
  - {id: polish, inline-prompt: "Polish {{state.draft}}", requires: [draft], gate: Review}
"""


async def test_a_review_gate_shows_the_answer_and_isolated_steps_start_afresh(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    name = add_playbook(ws, REVIEWED)
    llm = scripted_llm(
        [Turn(text="rough"), Turn(text="polished"), Turn(text="polished again")],
        api_key=KEY,
        n_ctx=32768,
    )
    agent = await open_with(llm)
    gate = RecordingGate(False)
    result = await runner_for(agent, ws, name, gate, []).run()
    assert result.status == "denied" and result.run.completed == ["draft"]
    assert [(g.step, g.kind, g.phase) for g in gate.asked] == [("polish", "Review", "after")]
    assert gate.asked[0].text == "Polish rough\n\n--- answer ---\npolished"
    isolated = llm.chat_requests[1].json["messages"]
    assert [m["role"] for m in isolated] == ["system", "user"]  # nothing of step 1
    gate.answer = True
    result = await runner_for(agent, ws, name, gate, []).run(resume=True)
    assert result.ok and result.run.outputs["polish"] == "polished again"


def git(ws: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(ws), *args], capture_output=True, text=True, check=True, timeout=30
    )
    return done.stdout


async def test_the_shipped_commit_playbook_commits_the_staged_change(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    git(ws, "init", "-q")
    git(ws, "config", "user.email", "t@example.invalid")
    git(ws, "config", "user.name", "Test")
    git(ws, "add", "calc.py")
    git(ws, "commit", "-qm", "start")
    (ws / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    git(ws, "add", "calc.py")
    commit = "git commit -qm 'fix(calc): add adds'"
    llm = scripted_llm(
        [
            Turn(text="add() now adds instead of subtracting"),
            Turn(text='{"subject": "fix(calc): add adds", "body": ""}'),
            Turn(tool_calls=[Call("Bash", {"command": commit})]),
            Turn(text="committed"),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    agent = await open_with(llm, allow=("Bash:git commit *",))
    result = await runner_for(agent, ws, "commit", approve_all, []).run()
    assert result.ok, result.message
    inspect = last_user(llm.chat_requests[0].json)
    assert "## staged changes" in inspect and "+    return a + b" in inspect
    assert result.run.state["message"] == {"subject": "fix(calc): add adds", "body": ""}
    assert "{{state.message.subject}}" not in last_user(llm.chat_requests[2].json)
    assert "fix(calc): add adds" in last_user(llm.chat_requests[2].json)
    assert git(ws, "log", "-1", "--format=%s").strip() == "fix(calc): add adds"
