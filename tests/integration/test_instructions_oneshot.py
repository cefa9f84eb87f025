"""What a repository says for agents reaches the model through `openmono -p` (a child process, as
a user runs it, against the scripted LLM): notes and always rules in the system prompt, a
subfolder's note and a matching glob rule in the first tool result only, the skills index, a
skill's body after the `Skill` call, a skill's script only with a Bash permission, a custom
command's `/NAME` (a skill's: test_instructions_interactive), `/rules` without the model, custom
agents as `Agent` types, and nothing but the notes from a workspace the user has not trusted."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from openmono.config import record_project_trust

from tests.support.clean_env import clean_environ
from tests.support.cli import CliResult, run_openmono
from tests.support.scripted_llm import Call, ScriptedLLM, Turn

pytestmark = pytest.mark.integration

KEY = "ins-key"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "instructions"
ScriptedFactory = Callable[..., ScriptedLLM]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURES / "claude", tmp_path / "ws")).resolve()


def trust(ws: Path, tmp_path: Path) -> None:
    record_project_trust(ws, True, ["instructions"], tmp_path / "data")


def run(tmp_path: Path, ws: Path, llm: ScriptedLLM, *args: str) -> CliResult:
    env = {
        **clean_environ(),
        "OPENMONO_DATA_DIR": str(tmp_path / "data"),
        "OPENMONO_LLM_ENDPOINT": llm.url,
        "LLAMA_API_KEY": KEY,
        "OPENMONO_LLM_MAX_RETRIES": "0",
        "HOME": str(tmp_path / "home"),
    }
    return run_openmono(list(args), env, ws)


def system(request: dict[str, Any]) -> str:
    return str(request["messages"][0]["content"])


def tool_results(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def test_notes_rules_and_what_rides_in_results(
    scripted_llm: ScriptedFactory, tmp_path: Path, ws: Path
) -> None:
    trust(ws, tmp_path)
    read = {"file_path": "src/api/items.py"}
    llm = scripted_llm(
        [
            Turn(tool_calls=[Call("FileRead", read, id="r1")]),
            Turn(tool_calls=[Call("FileRead", read, id="r2")]),
            Turn(text="Handlers are async."),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    r = run(tmp_path, ws, llm, "-p", "what do the handlers look like?")
    assert r.code == 0, r.err
    first, second, third = (c.json for c in llm.chat_requests)
    prompt = system(first)
    assert "# Project notes (CLAUDE.md)" in prompt and "port 5433" in prompt  # CLAUDE.local.md
    assert "no bare `except:`" in prompt  # a Claude Code rule without paths: always
    assert "- deploy: Deploy the shop" in prompt  # the skills index
    assert "pytest fixtures" not in prompt and "pydantic model" not in prompt  # glob rules
    assert "never block the event loop" not in prompt  # a subfolder's note
    [result] = tool_results(second)
    assert "async def get_item" in result
    assert "## Notes src/api/CLAUDE.md (for the files under src/api/)" in result
    assert "validates its input with a pydantic model" in result
    assert "[Instructions" not in tool_results(third)[1]  # once per session


def test_skill_loaded_by_the_model_and_its_script_needs_bash_permission(
    scripted_llm: ScriptedFactory, tmp_path: Path, ws: Path
) -> None:
    trust(ws, tmp_path)
    marker = tmp_path / "ran"
    script = ws / ".claude" / "skills" / "deploy" / "scripts" / "deploy.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    llm = scripted_llm(
        [
            Turn(tool_calls=[Call("Skill", {"name": "deploy", "arguments": "staging"}, id="s1")]),
            Turn(tool_calls=[Call("Bash", {"command": f"sh {script} staging"}, id="b1")]),
            Turn(text="I could not run the deploy script."),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    r = run(tmp_path, ws, llm, "-p", "deploy to staging")
    assert r.code == 0, r.err
    skill, denied = tool_results(llm.chat_requests[2].json)
    assert '<skill_content name="deploy">' in skill
    assert "Run `scripts/deploy.sh staging` from this skill's folder." in skill
    assert "Skill folder: .claude/skills/deploy" in skill and "scripts/deploy.sh" in skill
    assert "permission denied" in denied and "non-interactive" in denied
    assert not marker.exists()
    tools = [t["function"]["name"] for t in llm.chat_requests[0].json["tools"]]
    assert "Skill" in tools


def test_slash_names_of_commands_and_rules(
    scripted_llm: ScriptedFactory, tmp_path: Path, ws: Path
) -> None:
    trust(ws, tmp_path)
    llm = scripted_llm([Turn(text="Reviewed.")], api_key=KEY, n_ctx=32768)
    r = run(tmp_path, ws, llm, "-p", "/review-pr 42 security")
    assert r.code == 0, r.err
    assert "/review-pr: the custom command .claude/commands/review-pr.md" in r.err
    asked = llm.chat_requests[0].json["messages"][-1]["content"]
    assert asked.startswith("Review pull request #42 of this repository, focusing on security.")
    r = run(tmp_path, ws, llm, "-p", "/rules")
    assert r.code == 0, r.err
    assert r.out.startswith("## Rules\nRead from .claude/rules.")
    assert "**style** (.claude/rules/style.md, Claude Code): active: in the system prompt" in r.out
    assert len(llm.chat_requests) == 1  # /rules never reached the model


def test_custom_agents_are_agent_types(
    scripted_llm: ScriptedFactory, tmp_path: Path, ws: Path
) -> None:
    trust(ws, tmp_path)
    call = {"description": "review", "prompt": "Review src/api.", "agent_type": "reviewer"}
    llm = scripted_llm(
        [
            Turn(tool_calls=[Call("Agent", call, id="a1")]),
            Turn(text="No problems found."),  # the reviewer's answer
            Turn(text="The reviewer found nothing."),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    r = run(tmp_path, ws, llm, "-p", "review the api")
    assert r.code == 0, r.err
    parent, child, _ = (c.json for c in llm.chat_requests)
    agent = next(t for t in parent["tools"] if t["function"]["name"] == "Agent")
    assert "- reviewer: Reviews a change for bugs and style." in agent["function"]["description"]
    assert "You review changes. Read the diff" in system(child)
    assert sorted(t["function"]["name"] for t in child["tools"]) == [
        "Bash",
        "FileRead",
        "Glob",
        "Grep",
    ]


def test_an_untrusted_workspace_gives_notes_only(
    scripted_llm: ScriptedFactory, tmp_path: Path, ws: Path
) -> None:
    llm = scripted_llm(
        [Turn(tool_calls=[Call("FileRead", {"file_path": "src/api/items.py"})]), Turn(text="ok")],
        api_key=KEY,
        n_ctx=32768,
    )
    r = run(tmp_path, ws, llm, "-p", "/review-pr 1 x", "--output-format", "json")
    assert r.code == 0, r.err
    assert "Not loaded, the workspace is not trusted: rules in .claude/rules" in r.err
    first, second = (c.json for c in llm.chat_requests)
    assert first["messages"][-1]["content"] == "/review-pr 1 x"  # no command: sent as typed
    prompt = system(first)
    assert "# Project notes (CLAUDE.md)" in prompt
    assert "no bare `except:`" not in prompt and "# Skills" not in prompt
    assert "Skill" not in [t["function"]["name"] for t in first["tools"]]
    [result] = tool_results(second)
    assert "never block the event loop" in result  # a subfolder's note needs no trust
    assert "pydantic model" not in result
    assert json.loads(r.out)["ok"] is True
