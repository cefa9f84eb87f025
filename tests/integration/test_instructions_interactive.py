"""The workspace's instructions in the interactive surfaces: the classic REPL (in-process, typed
lines) and ACP over stdio (the SDK's client, the real `openmono acp`), against the scripted LLM:
`/rules`, `/skills`, a skill's and a custom command's own `/NAME`, `@rule`, and the slash commands
an editor is offered (`available_commands_update`)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from acp import text_block
from openmono.config import record_project_trust

from tests.support.acp_client import RecordingClient, acp_agent
from tests.support.acp_client import agent_env as acp_agent_env
from tests.support.classic_repl import run_classic
from tests.support.scripted_llm import ScriptedLLM, Turn

pytestmark = pytest.mark.integration

KEY = "ins-key"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "instructions"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = Path(shutil.copytree(FIXTURES / "claude", tmp_path / "ws")).resolve()
    # a playbook and a skill of one name: the skill wins /deploy, /skills says so
    playbook = root / ".openmono" / "playbooks" / "deploy"
    playbook.mkdir(parents=True)
    (playbook / "PLAYBOOK.md").write_text(
        "---\nname: deploy\ndescription: the old deploy playbook\nuser-invocable: true\n"
        "steps:\n  - {id: go, inline-prompt: Deploy.}\n---\nDeploy.\n"
    )
    return root


@pytest.fixture
def trusted(ws: Path, clean_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`ws`, trusted, for a surface run in this process (its own HOME: no real skills leak in)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    record_project_trust(ws, True, ["instructions"], clean_env)
    return ws


async def test_classic_repl(scripted_llm: Callable[..., ScriptedLLM], trusted: Path) -> None:
    ws = trusted
    llm = scripted_llm(
        [Turn(text="Deploying."), Turn(text="Reviewing."), Turn(text="Using the rule.")],
        api_key=KEY,
        n_ctx=32768,
    )
    lines = [
        "/help",
        "/skills",
        "/rules",
        "/deploy staging",
        "/review-pr 9 naming",
        "change the test, as @testing says",
        "/exit",
    ]
    shown = await run_classic(llm, ws, lines, KEY)
    assert (
        "this workspace's skills and commands" in shown and "/review-pr [number] [focus]" in shown
    )
    assert "deploy (.claude/skills/deploy; /deploy [staging|production])" in shown
    assert "hides the playbook deploy" in shown
    assert "/review-pr [number] [focus] (.claude/commands/review-pr.md)" in shown
    assert "reviewer (.claude/agents/reviewer.md; tools: FileRead, Grep, Glob, Bash)" in shown
    assert "style (.claude/rules/style.md, Claude Code): active: in the system prompt" in shown
    assert "src/api/CLAUDE.md: comes with the first tool call on a file under it" in shown
    deploy, review, mention = (r.json["messages"][-1]["content"] for r in llm.chat_requests)
    assert deploy.startswith('<skill_content name="deploy">') and "deploy.sh staging" in deploy
    assert review.startswith("Review pull request #9 of this repository, focusing on naming.")
    assert mention.startswith("change the test, as @testing says\n\n## testing (")
    assert "pytest fixtures, never setUp/tearDown" in mention


async def test_acp_offers_and_runs_the_commands(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path, ws: Path
) -> None:
    llm = scripted_llm([Turn(text="Reviewed.")], api_key=KEY, n_ctx=32768)
    env = acp_agent_env(tmp_path, llm.url, KEY)
    record_project_trust(ws, True, ["instructions"], tmp_path / "data")
    client = RecordingClient()
    async with acp_agent(env, ws, tmp_path / "acp.log", client=client) as (conn, _):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        listing = await asyncio.wait_for(
            conn.prompt(session_id=sid, prompt=[text_block("/rules")]), 60
        )
        review = await asyncio.wait_for(
            conn.prompt(session_id=sid, prompt=[text_block("/review-pr 5 tests")]), 60
        )
    assert listing.stop_reason == "end_turn" and review.stop_reason == "end_turn"
    offered = [u for s, u in client.updates if u.session_update == "available_commands_update"]
    assert {s for s, _ in client.updates} == {sid}
    names = [c.name for c in offered[0].available_commands]
    assert names == ["rules", "skills", "deploy", "changelog", "review-pr"]
    deploy = offered[0].available_commands[2]
    assert deploy.input is not None and deploy.input.root.hint == "[staging|production]"
    said = "".join(
        u.content.text for _, u in client.updates if u.session_update == "agent_message_chunk"
    )
    assert said.startswith("## Rules\nRead from .claude/rules.") and said.endswith("Reviewed.")
    assert len(llm.chat_requests) == 1
    asked = llm.chat_requests[0].json["messages"][-1]["content"]
    assert asked.startswith("Review pull request #5 of this repository, focusing on tests.")


async def test_tui_completes_and_runs_a_skill(
    scripted_llm: Callable[..., ScriptedLLM], trusted: Path
) -> None:
    from tests.support.tui_driver import make_app, send, wait_for

    ws = trusted
    llm = scripted_llm([Turn(text="Deploying now.")], api_key=KEY, n_ctx=32768)
    app = make_app(llm.url, ws, KEY)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, app.ready.is_set, what="the session")
        await pilot.press("/", "d", "e", "p")
        await pilot.pause()
        options = [
            str(app.completions.get_option_at_index(i).prompt)
            for i in range(app.completions.option_count)
        ]
        assert any("/deploy [staging|production]" in o and "Deploy the shop" in o for o in options)
        app.prompt.clear()
        await send(pilot, "/deploy staging")
        await wait_for(pilot, lambda: len(llm.chat_requests) == 1 and not app.busy, what="turn")
    asked = llm.chat_requests[0].json["messages"][-1]["content"]
    assert asked.startswith('<skill_content name="deploy">') and "deploy.sh staging" in asked
