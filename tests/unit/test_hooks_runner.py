"""Hooks as real shell commands: block, allow, JSON decisions, timeouts, bad JSON, matching."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from openmono.config import HookSettings
from openmono.hooks import HookError, HookRunner, run_hook
from openmono_contracts import ToolRequest, ToolResult


def runner(tmp_path: Path, **events: list[dict[str, object]]) -> HookRunner:
    return HookRunner(HookSettings.model_validate(events), tmp_path, "sess-1")


def request(tool: str = "Bash", **params: object) -> ToolRequest:
    return ToolRequest(
        tool=tool, params=params or {"command": "ls"}, call_id="c1", session_id="sess-1",
        workspace="/tmp", timeout_s=10,
    )  # fmt: skip


async def test_exit_2_blocks_with_stderr(tmp_path: Path) -> None:
    hooks = runner(tmp_path, pre_tool_use=[{"command": "echo 'no rm here' >&2; exit 2"}])
    assert await hooks.pre_tool_use(request(command="rm -rf build")) == "no rm here"


async def test_payload_on_stdin_env_and_plain_stdout(tmp_path: Path) -> None:
    seen = tmp_path / "payload.json"
    hooks = runner(tmp_path, pre_tool_use=[{"command": f"cat > {seen}; echo $OPENMONO_HOOK_EVENT"}])
    # stdout that is not JSON is a failed hook; this one prints an env var: that is checked below
    blocked = await hooks.pre_tool_use(request(command="ls -la"))
    assert blocked is not None and "not JSON" in blocked and "pre_tool_use" in blocked
    payload = json.loads(seen.read_text())
    assert payload == {
        "event": "pre_tool_use", "session_id": "sess-1", "workspace": str(tmp_path),
        "tool": "Bash", "input": {"command": "ls -la"}, "call_id": "c1",
    }  # fmt: skip
    quiet = runner(tmp_path, pre_tool_use=[{"command": "cat > /dev/null"}])
    assert await quiet.pre_tool_use(request()) is None


async def test_json_decision_block_and_allow(tmp_path: Path) -> None:
    block = '{"decision": "block", "reason": "writes are frozen"}'
    hooks = runner(tmp_path, pre_tool_use=[{"command": f"echo '{block}'"}])
    assert await hooks.pre_tool_use(request()) == "writes are frozen"
    allow = runner(tmp_path, pre_tool_use=[{"command": 'echo \'{"decision": "allow"}\''}])
    assert await allow.pre_tool_use(request()) is None


async def test_bad_json_fails_closed_with_a_clear_reason(tmp_path: Path) -> None:
    hooks = runner(tmp_path, pre_tool_use=[{"command": "echo '{not json'"}])
    reason = await hooks.pre_tool_use(request())
    assert reason is not None
    assert "failed (printed output that is not JSON: '{not json')" in reason
    assert "the call was not run" in reason
    array = runner(tmp_path, pre_tool_use=[{"command": "echo '[1, 2]'"}])
    assert "not an object" in (await array.pre_tool_use(request()) or "")


async def test_other_exit_codes_fail_closed(tmp_path: Path) -> None:
    hooks = runner(tmp_path, pre_tool_use=[{"command": "echo boom >&2; exit 3"}])
    reason = await hooks.pre_tool_use(request())
    assert reason is not None and "exited with 3: boom" in reason


async def test_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    child = tmp_path / "child.pid"
    command = f"sleep 60 & echo $! > {child}; wait"
    hooks = runner(tmp_path, pre_tool_use=[{"command": command, "timeout_s": 0.5}])
    t0 = time.monotonic()
    reason = await hooks.pre_tool_use(request())
    assert time.monotonic() - t0 < 5
    assert reason is not None and "timed out after 0.5 s (killed)" in reason
    pid = int(child.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.02)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_default_timeout_is_30_s() -> None:
    assert HookSettings.model_validate({"stop": [{"command": "true"}]}).stop[0].timeout_s == 30


async def test_matchers_by_name_and_input(tmp_path: Path) -> None:
    deny = "echo denied >&2; exit 2"
    hooks = runner(
        tmp_path,
        pre_tool_use=[
            {"command": deny, "matcher": "File(Write|Edit)"},
            {"command": deny, "matcher": "Bash", "input": "git push"},
            {"command": deny, "matcher": "*", "input": r"re:\.env\b"},
        ],
    )
    assert await hooks.pre_tool_use(request("FileWrite", file_path="a.py", content="")) == "denied"
    assert await hooks.pre_tool_use(request("FileRead", file_path="a.py")) is None
    assert await hooks.pre_tool_use(request("FileWriter", file_path="a.py")) is None  # whole name
    assert await hooks.pre_tool_use(request(command="git push origin")) == "denied"
    assert await hooks.pre_tool_use(request(command="git status")) is None
    assert await hooks.pre_tool_use(request("FileRead", file_path="config/.env")) == "denied"
    assert await hooks.pre_tool_use(request("FileRead", file_path="config/.envrc")) is None


def test_a_bad_regex_is_a_hook_error(tmp_path: Path) -> None:
    with pytest.raises(HookError, match="bad regex"):
        runner(tmp_path, pre_tool_use=[{"command": "true", "matcher": "("}])


async def test_post_tool_use_notes(tmp_path: Path) -> None:
    seen = tmp_path / "post.json"
    hooks = runner(
        tmp_path,
        post_tool_use=[
            {"command": f'cat > {seen}; echo \'{{"additional_context": "lint: ok"}}\''},
            {"command": "echo 'formatter changed 2 files' >&2; exit 2"},
            {"command": "echo nope", "matcher": "Bash"},
        ],
    )
    result = ToolResult(call_id="c1", ok=True, output="done")
    note = await hooks.post_tool_use(request(), result)
    assert note is not None
    lines = note.splitlines()
    assert lines[0] == "lint: ok" and lines[1] == "formatter changed 2 files"
    assert "'echo nope' failed: printed output that is not JSON" in lines[2]
    assert json.loads(seen.read_text())["result"] == {"ok": True, "output": "done", "error": None}


async def test_session_start_and_stop_report_failures(tmp_path: Path) -> None:
    seen = tmp_path / "stop.json"
    hooks = runner(
        tmp_path,
        session_start=[{"command": "exit 0"}, {"command": "sleep 5", "timeout_s": 0.2}],
        stop=[{"command": f"cat > {seen}"}],
    )
    problems = await hooks.session_start()
    assert problems == ["session_start hook 'sleep 5' failed: timed out after 0.2 s (killed)"]
    assert await hooks.stop("stop", "all done") == []
    assert json.loads(seen.read_text())["text"] == "all done"


async def test_run_hook_reports_a_command_that_cannot_start(tmp_path: Path) -> None:
    run = await run_hook("true", {}, timeout_s=5, cwd=tmp_path / "missing")
    assert run.failure is not None and "could not start" in run.failure
