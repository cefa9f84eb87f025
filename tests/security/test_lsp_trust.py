"""Finding 15: `Lsp`/`CodeIntel` are auto-allowed and start language servers on untrusted code.

rust-analyzer runs `build.rs`, and basedpyright, the server that ships with the worker, runs the
workspace's `.venv/bin/python` to find its packages (basedpyright 1.40, no interpreter
configured). The attack: a repository ships `.venv/bin/python` as a script; any `Lsp` or
`CodeIntel` call on a Python file, or the diagnostics an edit adds, runs it, with no question
asked. Now a server that runs the workspace's code is a declared fact of its language
(`Language.project_code`) and starts only when the agent says the user trusted the workspace
(`ToolRequest.workspace_trusted`). The script is real, basedpyright is real: untrusted it never
runs; trusted it does, which shows the attack was real. A workspace without `.venv` keeps its
Python server untrusted; languages whose servers always build the project (Rust, TypeScript,
Go, C#, Lua) are refused before any binary is looked up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from openmono.config import record_project_trust
from openmono_contracts import ToolRequest, ToolResult
from openmono_worker import run_tool, stop_language_servers
from openmono_worker.codeintel import LANGUAGES, READS_ONLY
from openmono_worker.codeintel._languages import UNDECLARED

from tests.support.agents import OpenAgent
from tests.support.scripted_llm import Call, ScriptedLLM, Turn

pytestmark = pytest.mark.integration


def call(ws: Path, tool: str, params: dict[str, object], trusted: bool) -> ToolResult:
    request = ToolRequest(
        tool=tool, params=params, call_id="c", session_id="s", workspace=str(ws),
        workspace_trusted=trusted, timeout_s=60,
    )  # fmt: skip
    return run_tool(request)


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[Path]:
    ws = tmp_path / "ws"
    (ws / ".venv" / "bin").mkdir(parents=True)
    marker = tmp_path / "venv-python-ran"
    python = ws / ".venv" / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho ran >> {marker}\nexec python3 "$@"\n')
    python.chmod(0o755)
    (ws / "m.py").write_text("x: int = 1\n")
    yield ws
    stop_language_servers(ws)


def test_no_server_runs_an_untrusted_workspaces_python(hostile: Path) -> None:
    marker = hostile.parent / "venv-python-ran"
    hover = {"action": "hover", "file_path": "m.py", "line": 1, "character": 1}
    for tool, params in (
        ("Lsp", hover),
        ("CodeIntel", {"operation": "diagnostics", "file_path": "m.py"}),
        ("CodeIntel", {"operation": "diagnostics"}),
    ):
        res = call(hostile, tool, params, trusted=False)
        assert not res.ok, res.output
        assert ".venv/bin/python" in (res.error or "") and "openmono config trust" in (
            res.error or ""
        )
    edit = call(hostile, "FileWrite", {"file_path": "n.py", "content": "y = 2\n"}, trusted=False)
    assert edit.ok and "(no diagnostics: no python language server for n.py" in edit.output
    assert not marker.exists()  # nothing of the workspace ran

    trusted = call(hostile, "Lsp", hover, trusted=True)
    assert trusted.ok, trusted.error
    assert marker.exists()  # the same call, trusted: basedpyright ran the workspace's python


@pytest.fixture
def ws(hostile: Path, clean_env: Path) -> Path:
    return hostile


async def test_the_agent_says_whether_the_user_trusted_the_workspace(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    """The same attack through a real session: the model's Lsp call (auto-allowed)."""
    marker = ws.parent / "venv-python-ran"
    hover = Call("Lsp", {"action": "hover", "file_path": "m.py", "line": 1, "character": 1})
    llm = scripted_llm([Turn(tool_calls=[hover]), Turn(text="ok")] * 2, n_ctx=32768)
    agent = await open_with(llm)
    await agent.run_turn("what is x?")
    result = next(m for m in llm.chat_requests[1].json["messages"] if m["role"] == "tool")
    assert "starts only in a workspace the user trusted" in result["content"]
    assert not marker.exists()
    record_project_trust(ws, True, [])
    trusted = await open_with(llm)
    await trusted.run_turn("what is x?")
    assert marker.exists()


def test_a_python_workspace_without_its_own_interpreter_needs_no_trust(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "m.py").write_text("x: int = 1\n")
    try:
        res = call(ws, "Lsp", {"action": "hover", "file_path": "m.py", "line": 1, "character": 1},
                   trusted=False)  # fmt: skip
    finally:
        stop_language_servers(ws)
    assert res.ok, res.error
    assert "x: Literal[1]" in res.output or "int" in res.output


@pytest.mark.parametrize("name", ["lib.rs", "main.ts", "main.go", "App.cs", "init.lua"])
def test_servers_that_build_the_project_are_refused_before_any_starts(
    tmp_path: Path, name: str
) -> None:
    (tmp_path / name).write_text("\n")
    res = call(tmp_path, "Lsp", {"action": "symbols", "file_path": name}, trusted=False)
    assert not res.ok and "starts only in a workspace the user trusted" in (res.error or "")
    trusted = call(tmp_path, "Lsp", {"action": "symbols", "file_path": name}, trusted=True)
    assert "starts only in a workspace" not in (trusted.error or "")  # e.g. "not on PATH" here


def test_every_language_declares_what_its_server_runs() -> None:
    assert all(lang.project_code is not UNDECLARED for lang in LANGUAGES)
    reads_only = {lang.id for lang in LANGUAGES if lang.project_code is READS_ONLY}
    assert reads_only == {"c", "shellscript"}
