"""Every slash command, typed into the classic REPL against the scripted model."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from openmono.cli.slash._table import COMMANDS, CommandTable, register

from tests.support.classic_repl import run_classic
from tests.support.scripted_llm import Call, ScriptedLLM, Turn, user_texts

pytestmark = pytest.mark.integration

KEY = "cmd-key"
ISSUE_COMMANDS = {
    "help", "status", "model", "compact", "clear", "mode", "resume", "retry", "undo", "btw",
    "stats", "init", "debug", "export", "checkpoint", "prompt", "plan", "think", "memory",
}  # fmt: skip


@pytest.fixture
def ws(tmp_path: Path, clean_env: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('v1')\n")
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.ruff]\n[tool.pytest]\n')
    (root / "Makefile").write_text("test:\n\tpytest\nlint:\n\truff check .\n")
    return root


def data_dir() -> Path:
    return Path(os.environ["OPENMONO_DATA_DIR"])


def test_the_table_has_every_command_and_takes_new_ones() -> None:
    import openmono.cli.slash  # noqa: F401

    assert {c.name for c in COMMANDS} >= ISSUE_COMMANDS
    assert all(c.description for c in COMMANDS)
    table = CommandTable()

    async def hello(_surface: object, _arg: str) -> None: ...

    table["hello"] = ("says hello", hello)  # the old dict shape still plugs in
    table.register("bye", "says bye", hello, arg_hint="[WHO]", aliases=("b",))
    assert [c.usage for c in table.complete("")] == ["/hello", "/bye [WHO]"]
    assert table.get("b") is table.get("bye")


async def test_a_command_registered_from_elsewhere_runs_in_the_repl(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path
) -> None:
    seen: list[str] = []

    async def shout(surface: object, arg: str) -> None:
        seen.append(arg)
        surface.print(f"SHOUT {arg.upper()}")  # type: ignore[attr-defined]

    register("shout", "say it loud", shout, arg_hint="TEXT")
    try:
        llm = scripted_llm([], api_key=KEY, n_ctx=32768)
        shown = await run_classic(llm, ws, ["/help", "/shout hi", "/exit"], KEY)
    finally:
        COMMANDS._commands.pop("shout")
    assert "/shout TEXT" in shown and "say it loud" in shown and "SHOUT HI" in shown
    assert seen == ["hi"]


async def test_model_think_debug_btw_stats(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path
) -> None:
    models = {"object": "list", "data": [{"id": "small"}, {"id": "big"}]}
    llm = scripted_llm(
        [
            Turn(text="Hello there."),
            Turn(text="It is 42.", reasoning="aside thought"),
            Turn(text="Thinking now.", tool_calls=[Call("Glob", {"pattern": "*.py"})]),
            Turn(text="done"),
        ],
        api_key=KEY,
        n_ctx=32768,
        models_json=models,
    )
    shown = await run_classic(
        llm,
        ws,
        ["/model", "hi", "/btw what is six times seven?", "/think high", "/debug", "look",
         "/debug off", "/think", "/stats", "/exit"],
        KEY,
    )  # fmt: skip
    assert "served: small, big" in shown
    first, aside, third, fourth = (r.json for r in llm.chat_requests)
    assert first["chat_template_kwargs"] == {"enable_thinking": False}  # off by default
    assert "reasoning_effort" not in first
    # /btw: no tools, the conversation so far plus the question, and it is not kept
    assert "tools" not in aside and user_texts(aside) == ["hi", "what is six times seven?"]
    assert "It is 42." in shown
    assert third["chat_template_kwargs"] == {"enable_thinking": True}
    assert third["reasoning_effort"] == "high" == fourth["reasoning_effort"]
    assert user_texts(third) == ["hi", "look"]  # the aside did not enter the conversation
    assert "thinking: on, effort high" in shown and "thinking: off" in shown
    assert "debug: on" in shown and "debug › request:" in shown and "debug › usage:" in shown
    assert shown.count("debug › request:") == 2  # off again after /debug off
    assert "tool calls" in shown and "1 (0 failed)" in shown and "Glob ×1" in shown
    assert "completion tokens" in shown


async def test_compact_checkpoint_with_the_model_and_without(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path
) -> None:
    llm = scripted_llm(
        [
            Turn(text="one"),
            Turn(text="two"),
            Turn(text="SUMMARY: the user said first and second."),
            Turn(text="three"),
            Turn(text="CHECKPOINT SUMMARY"),
            Turn.http_error(400, body={"error": {"message": "no"}}),  # /compact: no summary
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    shown = await run_classic(
        llm,
        ws,
        ["first", "second", "/compact the files", "third", "/checkpoint", "/compact", "/exit"],
        KEY,
    )
    summary_request = llm.chat_requests[2].json
    assert "Focus on: the files" in summary_request["messages"][0]["content"]
    assert "tools" not in summary_request
    assert "compacted: summarised 2 messages (focus: the files)" in shown
    third = llm.chat_requests[3].json
    assert user_texts(third)[0].startswith("[Earlier conversation: summary")
    assert "SUMMARY: the user said" in user_texts(third)[0]
    assert "checkpoint: 3 messages summarised" in shown
    [saved] = list((data_dir() / "sessions").rglob("checkpoints/*.md"))
    assert saved.read_text() == "CHECKPOINT SUMMARY\n"
    assert "digest (no model summary)" in shown


async def test_clear_resume_retry_undo_mode_plan(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path
) -> None:
    def write(text: str) -> Call:
        return Call("FileWrite", {"file_path": "src/app.py", "content": text})

    llm = scripted_llm(
        [
            Turn(tool_calls=[write("print('v2')\n")]),
            Turn(text="v2 now."),
            Turn(tool_calls=[write("print('v3')\n")]),
            Turn(text="v3 now."),
            Turn(text="v3 again."),
            Turn(text="Plan: 1. read 2. change."),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    shown = await run_classic(
        llm,
        ws,
        ["make v2", "a", "make v3", "/retry", "/undo 2", "/undo", "/mode ask", "/mode nope",
         "/plan add a flag", "/status", "/clear", "/resume", "/exit"],
        KEY,
    )  # fmt: skip
    assert "v3 again." in shown
    assert user_texts(llm.chat_requests[4].json) == ["make v2", "make v3"]
    assert "undid 2 turns of file changes" in shown and "nothing to undo" in shown
    assert (ws / "src" / "app.py").read_text() == "print('v1')\n"
    assert "mode: ask" in shown and "modes: agent, plan, ask" in shown
    plan_request = llm.chat_requests[5].json
    assert "Current mode: plan" in plan_request["messages"][0]["content"]
    assert user_texts(plan_request)[-1] == "add a flag"
    assert "mode" in shown and "plan" in shown and "thinking" in shown  # /status rows
    assert "tools" in shown and "native (auto: the chat template renders tools" in shown
    assert "scripted-model" in shown and "/models/scripted-model" not in shown  # its stem
    assert "new session" in shown
    assert "make v2" in shown.split("new session")[1]  # /resume lists the first session


async def test_init_export_prompt_memory(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path, tmp_path: Path
) -> None:
    (data_dir() / "memory").mkdir(parents=True)
    (data_dir() / "memory" / "tabs.md").write_text(
        "---\nname: Tabs\ndescription: indent with tabs\ntype: user\n---\n\nAlways tabs.\n"
    )
    mem = ws / ".openmono" / "memory"
    mem.mkdir(parents=True)
    (mem / "build.md").write_text(
        "---\nname: Build\ndescription: how to build\ntype: project\n---\n\nmake build\n"
    )
    llm = scripted_llm(
        [Turn(text="hello **world**"), Turn(text="as a pirate"), Turn(text="plan prompt seen")],
        api_key=KEY,
        n_ctx=32768,
    )
    shown = await run_classic(
        llm,
        ws,
        ["/init", "/init", "hi", "/export", "/export out/s.json", f"/export {tmp_path}/s.html",
         "/export s.txt", "/prompt set system project You are a pirate in {workspace}.",
         "/prompt", "arr", "/prompt create plan global", "/prompt reset system",
         "/memory", "/memory show Tabs", "/memory forget Build", "/memory list",
         "/mode plan", "go", "/exit"],
        KEY,
    )  # fmt: skip
    notes = (ws / "OPENMONO.md").read_text()
    assert "Python: 1 files" in notes and "`make test`" in notes and "`uv run" not in notes
    assert "- `src/` (1 files)" in notes and "exists; /init force" in shown
    assert "# Project notes (OPENMONO.md)" in llm.chat_requests[0].json["messages"][0]["content"]
    session_id = next(iter(p.stem for p in ws.glob("openmono-*.md"))).removeprefix("openmono-")
    md = (ws / f"openmono-{session_id}.md").read_text()
    assert "## user" in md and "hello **world**" in md
    exported = json.loads((ws / "out" / "s.json").read_text())
    assert [m["role"] for m in exported["messages"]] == ["user", "assistant"]
    assert "<section class=assistant>" in (tmp_path / "s.html").read_text()
    assert "export as .md, .json, .html" in shown
    pirate = llm.chat_requests[1].json["messages"][0]["content"]
    assert pirate.startswith(f"You are a pirate in {ws.resolve()}.")
    assert "Project notes" in pirate  # notes, memory and git still follow the override
    assert "override" in shown and "You are a pirate" in shown  # /prompt shows it
    plan_file = data_dir() / "prompts" / "plan.md"
    assert "Plan mode is read-only" in plan_file.read_text()
    plan_prompt = llm.chat_requests[2].json["messages"][0]["content"]
    assert "Plan mode is read-only" in plan_prompt and "pirate" not in plan_prompt
    assert "indent with tabs" in shown and "how to build" in shown  # /memory lists both scopes
    assert "Always tabs." in shown and "forgot Build (project)" in shown
    assert not (mem / "build.md").exists()


async def test_unknown_command(scripted_llm: Callable[..., ScriptedLLM], ws: Path) -> None:
    llm = scripted_llm([], api_key=KEY, n_ctx=32768)
    shown = await run_classic(llm, ws, ["/nonsense", "/undo x", "/btw", "/exit"], KEY)
    assert "unknown command /nonsense" in shown and "usage: /undo" in shown
    assert "usage: /btw QUESTION" in shown
