"""Agent-side tools: they validate like any tool and hand the loop a typed effect."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from openmono_contracts.facts import USER_MEMORY_DIR
from openmono_worker.memory import forget, read_memories, read_memory_dir

from tests.support.tool_calls import ToolBench, make_bench


@pytest.fixture
def tb(tmp_path: Path) -> ToolBench:
    return make_bench(tmp_path)


def test_todo_write_renders_and_returns_the_list(tb: ToolBench) -> None:
    todos = [
        {"content": "Read code", "status": "completed", "active_form": "Reading code"},
        {"content": "Fix bug", "status": "in_progress", "active_form": "Fixing bug"},
        {"content": "Run tests", "status": "pending", "active_form": "Running tests"},
    ]
    r = tb.call("TodoWrite", todos=todos)
    assert r.ok and r.output.splitlines() == [
        "Todo list updated: 3 items (1 completed, 1 in progress, 1 pending)",
        "[x] Read code",
        "[>] Fix bug",
        "[ ] Run tests",
    ]
    assert r.effect is not None and r.effect.kind == "todos"
    assert [t.model_dump() for t in r.effect.todos] == todos


def test_todo_write_rejects_bad_status(tb: ToolBench) -> None:
    r = tb.call("TodoWrite", todos=[{"content": "x", "status": "doing", "active_form": "x"}])
    assert not r.ok and "todos.0.status" in (r.error or "") and r.effect is None


def test_todo_write_flags_two_in_progress(tb: ToolBench) -> None:
    item = {"content": "x", "status": "in_progress", "active_form": "x"}
    assert "more than one item is in progress" in tb.call("TodoWrite", todos=[item, item]).output


def test_ask_user_effect(tb: ToolBench) -> None:
    r = tb.call("AskUser", question="Use tabs?", options=["yes", "no", " "])
    assert r.ok and r.effect is not None and r.effect.kind == "ask_user"
    assert r.effect.question == "Use tabs?" and r.effect.options == ["yes", "no"]
    assert not tb.call("AskUser", question="").ok


def test_plan_mode_effects(tb: ToolBench) -> None:
    on = tb.call("EnterPlanMode", reason="risky migration")
    off = tb.call("ExitPlanMode")
    assert on.effect is not None and on.effect.kind == "plan_mode" and on.effect.active
    assert off.effect is not None and off.effect.kind == "plan_mode" and not off.effect.active
    assert not tb.call("EnterPlanMode").ok  # reason is required
    assert not tb.call("ExitPlanMode", plan="x").ok


def test_memory_save_writes_file_and_index(tb: ToolBench) -> None:
    r = tb.call(
        "MemorySave",
        name="Test command",
        type="project",
        description="how tests\nare run",
        content="Run `make test`.",
    )
    assert r.ok and r.effect is not None and r.effect.kind == "memory_saved"
    assert r.effect.path == ".openmono/memory/test-command.md"
    text = tb.read(".openmono/memory/test-command.md")
    assert text.startswith("---\nname: Test command\ndescription: how tests are run\n")
    assert "type: project" in text and text.endswith("Run `make test`.\n")
    index = tb.read(".openmono/memory/MEMORY.md")
    assert "- [Test command](test-command.md) — how tests are run" in index
    [memory] = read_memories(tb.ws)
    assert (memory.name, memory.type, memory.content) == (
        "Test command",
        "project",
        "Run `make test`.",
    )


def test_memory_save_same_name_replaces(tb: ToolBench) -> None:
    for content in ("first", "second"):
        tb.call("MemorySave", name="Style", type="feedback", description="d", content=content)
    tb.call("MemorySave", name="Other", type="user", description="o", content="x")
    memories = {m.name: m for m in read_memories(tb.ws)}
    assert memories["Style"].content == "second" and set(memories) == {"Style", "Other"}
    index = tb.read(".openmono/memory/MEMORY.md")
    assert index.count("(style.md)") == 1 and index.count("(other.md)") == 1


def test_memory_save_user_scope_writes_the_data_dir_and_forget_removes(tb: ToolBench) -> None:
    r = tb.call(
        "MemorySave", name="Tabs", type="user", description="d", content="tabs", scope="user"
    )
    folder = Path(tb.settings.data_dir) / USER_MEMORY_DIR
    assert r.ok and "user memory 'Tabs'" in r.output and (folder / "tabs.md").is_file()
    assert read_memories(tb.ws) == []  # not the project's
    assert [m.name for m in read_memory_dir(folder)] == ["Tabs"]
    gone = forget(folder, "Tabs")
    assert gone is not None and read_memory_dir(folder) == []
    assert "tabs.md" not in (folder / "MEMORY.md").read_text()
    assert forget(folder, "Tabs") is None


def test_memory_save_rejects_bad_type(tb: ToolBench) -> None:
    r = tb.call("MemorySave", name="x", type="secret", description="d", content="c")
    assert not r.ok and "type" in (r.error or "")


def test_memory_save_cannot_be_redirected_out(tb: ToolBench, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.symlink(outside, tb.ws / ".openmono")
    r = tb.call("MemorySave", name="x", type="user", description="d", content="c")
    assert not r.ok and "outside the workspace" in (r.error or "")
    assert list(outside.iterdir()) == []
