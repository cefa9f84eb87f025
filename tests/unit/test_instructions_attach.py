"""What rides in tool results (tests/fixtures/instructions): a subfolder's notes and the rules a
touched file matches come once per conversation, again after a compaction, separately for a
sub-agent's conversation; a loaded skill's files outside the workspace become readable, exactly
those. The worker's tools run for real (the in-process executor)."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from openmono.executor import LocalExecutor
from openmono.instructions import Attachments, Instructions, SkillTool, WithInstructions
from openmono.llm import conversation
from openmono.loop import WorkerTools, discard
from openmono.permissions import PermissionEngine
from openmono_contracts import ToolRequest
from openmono_worker import WorkerSettings

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "instructions"


class Counter:
    def __init__(self) -> None:
        self.value = 0

    def __call__(self) -> int:
        return self.value


@pytest.fixture
async def executor(tmp_path: Path) -> AsyncIterator[LocalExecutor]:
    run = LocalExecutor(WorkerSettings(data_dir=tmp_path / "worker"))
    yield run
    await run.aclose()


def request(ws: Path, tool: str, n: int, **params: object) -> ToolRequest:
    return ToolRequest(tool=tool, params=params, call_id=f"c{n}", session_id="s", workspace=str(ws))


async def test_notes_and_rules_ride_once_per_conversation(
    tmp_path: Path, executor: LocalExecutor
) -> None:
    ws = Path(shutil.copytree(FIXTURES / "claude", tmp_path / "ws")).resolve()
    ins = Instructions.load(ws, tmp_path / "data", tmp_path / "home", trusted=True)
    generation = Counter()
    attachments = Attachments(ins, "main", generation)
    tools = WithInstructions(WorkerTools(executor), attachments, lambda: [])

    async def read(path: str, n: int) -> str:
        result = await tools.call(request(ws, "FileRead", n, file_path=path), discard)
        assert result.ok, result.error
        return result.output

    with conversation("main"):
        first = await read("src/api/items.py", 1)
        again = await read("src/api/items.py", 2)
        other = await read("tests/test_items.py", 3)
    assert "async def get_item" in first
    assert "## Notes src/api/CLAUDE.md (for the files under src/api/)" in first
    assert "never block the event loop" in first and "validates its input" in first
    assert "[Instructions" not in again
    assert "pytest fixtures" in other and "event loop" not in other
    assert attachments.delivered() == {
        ws / "src/api/CLAUDE.md",
        ws / ".claude/rules/backend/api.md",
        ws / ".claude/rules/testing.md",
    }
    with conversation("child"):  # a sub-agent's own conversation gets them too
        assert "never block the event loop" in await read("src/api/items.py", 4)
    with conversation("main"):
        assert "[Instructions" not in await read("src/api/items.py", 5)
        generation.value += 1  # a compaction: what was shown may be gone
        assert "never block the event loop" in await read("src/api/items.py", 6)
    failed = await tools.call(request(ws, "FileRead", 7, file_path="src/api/nope.py"), discard)
    assert not failed.ok and "[Instructions" not in (failed.output or "")


async def test_a_loaded_skill_outside_the_workspace_is_readable_exactly(
    tmp_path: Path, executor: LocalExecutor
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "agentskills" / ".agents", home / ".agents")
    (home / ".agents" / "secret.txt").write_text("not part of any skill")
    ins = Instructions.load(ws, tmp_path / "data", home, trusted=True)
    permissions = PermissionEngine(ws)
    skill = SkillTool(ins, permissions)
    tools = WithInstructions(WorkerTools(executor), Attachments(ins, "main"), skill.read_roots)
    facts = tools.tools()["FileRead"].facts
    reference = home / ".agents/skills/pdf-tools/references/REFERENCE.md"
    assert permissions.decide("FileRead", {"file_path": str(reference)}, facts).action == "ask"
    refused = await tools.call(request(ws, "FileRead", 1, file_path=str(reference)), discard)
    assert not refused.ok and "outside the workspace" in (refused.error or "")

    loaded = await skill.call(request(ws, "Skill", 2, name="pdf-tools"), discard)
    assert loaded.ok and f"Skill folder: {home / '.agents/skills/pdf-tools'}" in loaded.output
    assert "references/REFERENCE.md" in loaded.output and "scripts/extract.py" in loaded.output
    assert permissions.decide("FileRead", {"file_path": str(reference)}, facts).action == "allow"
    read = await tools.call(request(ws, "FileRead", 3, file_path=str(reference)), discard)
    assert read.ok and "columns left to right" in read.output
    secret = home / ".agents" / "secret.txt"  # beside the skills, in no skill's folder
    assert permissions.decide("FileRead", {"file_path": str(secret)}, facts).action == "ask"
    refused = await tools.call(request(ws, "FileRead", 4, file_path=str(secret)), discard)
    assert not refused.ok
    unknown = await skill.call(request(ws, "Skill", 5, name="nope"), discard)
    assert not unknown.ok and "the skills are: pdf-tools, review" in (unknown.error or "")
    assert skill.tools()["Skill"].spec.parameters["properties"]["name"]["enum"] == [
        "pdf-tools",
        "review",
    ]


def test_the_conversation_generation_moves_when_earlier_messages_change() -> None:
    from openmono.llm import ChatMessage
    from openmono.loop import Conversation
    from openmono.loop._context import compact

    conv = Conversation(system="s")
    for i in range(6):
        conv.add(ChatMessage(role="user", content=f"q{i}"))
        conv.add(ChatMessage(role="assistant", content="a" * 5000))
    seen = conv.generation
    compact(conv, n_ctx=2000, overhead=0, force=True)  # drops and evicts
    assert conv.generation > seen
    seen = conv.generation
    conv.truncate(1)  # /retry
    assert conv.generation == seen + 1
    conv.replace_prefix(1, "summary")  # a checkpoint
    assert conv.generation == seen + 2
