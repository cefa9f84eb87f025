"""Parts of the interactive surfaces that need no session: prompt overrides, request options,
the command table's fallbacks, exports and the project survey of /init."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openmono.agent import prompt_file, prompt_override
from openmono.cli.slash._export import export_text
from openmono.cli.slash._survey import survey
from openmono.cli.slash._table import CommandTable, run_command
from openmono.llm import ChatMessage, RequestOptions, ToolCall


def test_prompt_overrides_project_beats_global_and_plan_falls_back(tmp_path: Path) -> None:
    data, ws = tmp_path / "data", tmp_path / "ws"
    assert prompt_override("agent", data, ws) is None
    for kind, scope, text in (
        ("system", "global", "global system"),
        ("plan", "global", "global plan"),
        ("system", "project", "project system"),
    ):
        path = prompt_file(kind, scope, data, ws)  # type: ignore[arg-type]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert prompt_override("agent", data, ws) == (
        "project system",
        ws / ".openmono/prompts/system.md",
    )
    assert prompt_override("plan", data, ws) == ("global plan", data / "prompts/plan.md")
    prompt_file("plan", "global", data, ws).write_text("  \n")  # blank: no override
    assert prompt_override("plan", data, ws)[0] == "project system"  # type: ignore[index]


def test_request_options_send_nothing_unless_set() -> None:
    body: dict[str, object] = {}
    RequestOptions().apply(body)
    assert body == {}
    RequestOptions(thinking=False, reasoning_effort="high").apply(body)
    assert body == {"chat_template_kwargs": {"enable_thinking": False}}
    body = {}
    RequestOptions(thinking=True, reasoning_effort="low").apply(body)
    assert body == {"chat_template_kwargs": {"enable_thinking": True}, "reasoning_effort": "low"}


class Out:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def print(self, markup: str = "") -> None:
        self.lines.append(markup)


async def test_the_table_asks_its_fallbacks_for_unknown_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import openmono.cli.slash._table as commands

    table = CommandTable()
    seen: list[str] = []

    async def dyn(_surface: object, arg: str) -> None:
        seen.append(arg)

    table.fallbacks.append(lambda _s, name: ("dynamic", dyn) if name == "deploy" else None)
    monkeypatch.setattr(commands, "COMMANDS", table)
    out = Out()
    await run_command(out, "/deploy  prod ")  # type: ignore[arg-type]
    await run_command(out, "/nope")  # type: ignore[arg-type]
    assert seen == ["prod"] and "unknown command /nope" in out.lines[0]


def test_exports() -> None:
    call = ToolCall(id="c1", name="Bash", arguments='{"command": "ls"}')
    messages = [
        ChatMessage(role="user", content="list <files>"),
        ChatMessage(role="assistant", content="", tool_calls=[call]),
        ChatMessage(role="tool", content="a.py", tool_call_id="c1"),
        ChatMessage(role="assistant", content="One file."),
    ]
    md = export_text("md", "s1", "sys", messages)
    assert "## user" in md and "**Bash** `c1`" in md and "a.py" in md
    data = json.loads(export_text("json", "s1", "sys", messages))
    assert data["system"] == "sys" and data["messages"][1]["tool_calls"][0]["name"] == "Bash"
    html = export_text("html", "s1", "sys", messages)
    assert "list &lt;files&gt;" in html and html.startswith("<!doctype html>")


def test_survey_reads_build_files(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"scripts": {"test": "vitest", "build": "tsc"}}')
    (tmp_path / "Cargo.toml").write_text("[package]\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.rs").write_text("fn main() {}\n")
    (tmp_path / "node_modules" / "x").mkdir(parents=True)
    (tmp_path / "node_modules" / "x" / "i.js").write_text("")
    text = survey(tmp_path)
    assert "- Rust: 1 files" in text and "JavaScript" not in text  # node_modules skipped
    assert "`npm run build`" in text and "`npm run test`" in text and "`cargo test`" in text
    assert "- `src/` (1 files)" in text
