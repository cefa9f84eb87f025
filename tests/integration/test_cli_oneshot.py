"""`openmono -p`, `sessions`, `config`, `doctor` as subprocesses against the scripted server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from openmono.sessions import SessionStore

from tests.support.clean_env import clean_environ
from tests.support.cli import OPENMONO, CliResult, run_openmono
from tests.support.procs import free_port
from tests.support.scripted_llm import Call, ScriptedLLM, Turn

pytestmark = pytest.mark.integration

KEY = "cli-key"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = clean_environ()
    base.pop("LLAMA_API_KEY", None)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("the answer is 42\n")
    base.update(
        OPENMONO_DATA_DIR=str(tmp_path / "data"), OPENMONO_LLM_MAX_RETRIES="0", HOME=str(tmp_path)
    )
    return base


def ws_of(env: dict[str, str]) -> Path:
    return Path(env["OPENMONO_DATA_DIR"]).parent / "ws"


def run(
    args: list[str], env: dict[str, str], stdin: str | None = None, timeout: float = 120
) -> CliResult:
    return run_openmono(args, env, ws_of(env), stdin, timeout)


def llm_env(env: dict[str, str], llm: ScriptedLLM) -> dict[str, str]:
    return {**env, "OPENMONO_LLM_ENDPOINT": llm.url, "LLAMA_API_KEY": KEY}


ScriptedFactory = Callable[..., ScriptedLLM]


def test_print_text_reads_a_file_and_answers(
    scripted_llm: ScriptedFactory, env: dict[str, str]
) -> None:
    llm = scripted_llm(
        [
            Turn(text="Checking.", tool_calls=[Call("FileRead", {"file_path": "notes.txt"})]),
            Turn(text="The answer is 42."),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    r = run(["-p", "what is the answer?"], llm_env(env, llm))
    assert r.code == 0, r.err
    assert r.out == "Checking.\nThe answer is 42.\n"
    assert "● FileRead(notes.txt)" in r.err
    assert llm.chat_requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_json_output_and_resume(scripted_llm: ScriptedFactory, env: dict[str, str]) -> None:
    llm = scripted_llm(
        [Turn(text="first answer"), Turn(text="second answer")], api_key=KEY, n_ctx=32768
    )
    e = llm_env(env, llm)
    r = run(["-p", "first question", "--output-format", "json"], e)
    assert r.code == 0, r.err
    data = json.loads(r.out)
    assert data["ok"] is True and data["result"] == "first answer" and data["reason"] == "stop"
    assert data["tool_protocol"] == "native"
    assert data["calls"] == {"valid": 0, "invalid": 0, "unknown_tool": 0}
    r2 = run(
        ["--resume", data["session_id"], "-p", "second question", "--output-format", "json"], e
    )
    assert r2.code == 0, r2.err
    assert json.loads(r2.out)["session_id"] == data["session_id"]
    sent = [(m["role"], m["content"]) for m in llm.chat_requests[1].json["messages"][1:]]
    assert sent == [
        ("user", "first question"),
        ("assistant", "first answer"),
        ("user", "second question"),
    ]
    listed = run(["sessions", "list", "--json"], e)
    rows = [json.loads(line) for line in listed.out.splitlines()]
    assert [(row["session_id"], row["title"]) for row in rows] == [
        (data["session_id"], "first question")
    ]
    shown = run(["sessions", "show", data["session_id"][:12]], e)
    assert shown.code == 0 and "second answer" in shown.out and "first question" in shown.out


def test_stream_json_lines(scripted_llm: ScriptedFactory, env: dict[str, str]) -> None:
    llm = scripted_llm(
        [
            Turn(reasoning="thinking hard", tool_calls=[Call("Glob", {"pattern": "*.txt"})]),
            Turn(text="Found notes.txt."),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    r = run(["-p", "list txt files", "--output-format", "stream-json"], llm_env(env, llm))
    assert r.code == 0, r.err
    events = [json.loads(line) for line in r.out.splitlines()]
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "session" and events[0]["n_ctx"] == 32768
    assert events[0]["model"] == "scripted-model"
    assert events[0]["model_id"] == "/models/scripted-model.gguf"
    assert kinds[-1] == "done" and events[-1]["reason"] == "stop"
    assert "reasoning" in kinds and "usage" in kinds
    assert kinds.index("tool_started") < kinds.index("tool_finished") < kinds.index("text")
    finished = next(e for e in events if e["kind"] == "tool_finished")
    assert finished["ok"] and "notes.txt" in finished["output"]


def test_allow_flag_and_non_interactive_denial(
    scripted_llm: ScriptedFactory, env: dict[str, str]
) -> None:
    write = Turn(tool_calls=[Call("FileWrite", {"file_path": "out.txt", "content": "hi\n"})])
    llm = scripted_llm(
        [write, Turn(text="denied"), write, Turn(text="written")], api_key=KEY, n_ctx=32768
    )
    e = llm_env(env, llm)
    r = run(["-p", "write out.txt"], e)
    assert r.code == 0 and r.out.strip() == "denied"
    assert "✗ FileWrite: permission denied" in r.err
    assert not (ws_of(env) / "out.txt").exists()
    r = run(["-p", "write out.txt", "--allow", "FileWrite:out.*"], e)
    assert r.code == 0 and r.out.strip() == "written"
    assert (ws_of(env) / "out.txt").read_text() == "hi\n"


def test_plan_mode_flag_blocks_writes(scripted_llm: ScriptedFactory, env: dict[str, str]) -> None:
    write = Turn(tool_calls=[Call("FileWrite", {"file_path": "plan.txt", "content": "x"})])
    llm = scripted_llm([write, Turn(text="Plan: ...")], api_key=KEY, n_ctx=32768)
    r = run(["-p", "plan it", "--mode", "plan", "--yolo"], llm_env(env, llm))
    assert r.code == 0
    assert "plan mode" in r.err
    assert not (ws_of(env) / "plan.txt").exists()


def test_exit_code_is_nonzero_when_the_model_fails(
    scripted_llm: ScriptedFactory, env: dict[str, str]
) -> None:
    llm = scripted_llm([Turn.http_error(500)], api_key=KEY, n_ctx=32768)
    r = run(["-p", "hi", "--output-format", "json"], llm_env(env, llm))
    assert r.code == 1
    data = json.loads(r.out)
    assert data["ok"] is False and data["reason"] == "error"


def test_exit_code_when_nothing_listens(env: dict[str, str]) -> None:
    r = run(["-p", "hi", "--endpoint", f"http://127.0.0.1:{free_port()}"], env)
    assert r.code == 1
    assert "stopped: error" in r.err


def test_bad_config_file_is_exit_2(env: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"max_iterations": "lots"}')
    r = run(["--config", str(bad), "-p", "hi"], env)
    assert r.code == 2 and "max_iterations" in r.err


def test_task_from_stdin(scripted_llm: ScriptedFactory, env: dict[str, str]) -> None:
    llm = scripted_llm([Turn(text="from stdin")], api_key=KEY, n_ctx=32768)
    r = run([], llm_env(env, llm), stdin="a task on stdin\n")
    assert r.code == 0 and r.out.strip() == "from stdin"
    assert llm.chat_requests[0].json["messages"][-1]["content"] == "a task on stdin"


def test_sigint_stops_a_one_shot_run_and_keeps_the_partial_answer(
    scripted_llm: ScriptedFactory, env: dict[str, str]
) -> None:
    text = "".join(f"word{i} " for i in range(2000))
    llm = scripted_llm(
        [Turn(text=text, chunk_chars=6, chunk_delay_s=0.02)], api_key=KEY, n_ctx=32768
    )
    proc = subprocess.Popen(
        [OPENMONO, "-p", "talk", "--output-format", "stream-json"],
        env=llm_env(env, llm), cwd=ws_of(env), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        texts = 0
        deadline = time.monotonic() + 60
        while texts < 3 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line, "the run ended before streaming"
            texts += json.loads(line)["kind"] == "text"
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert proc.returncode == 130
    store = SessionStore(Path(env["OPENMONO_DATA_DIR"]))
    last = store.load("last").messages[-1]
    assert (
        last.role == "assistant" and last.interrupted and (last.content or "").startswith("word0 ")
    )


def test_config_set_and_get(env: dict[str, str]) -> None:
    r = run(["config", "set", "llm.endpoint", "http://127.0.0.1:1"], env)
    assert r.code == 0, r.err
    assert run(["config", "get", "llm.endpoint"], env).out.strip() == "http://127.0.0.1:1"
    run(["config", "set", "max_iterations", "9", "--project"], env)
    assert run(["config", "get", "max_iterations"], env).out.strip() == "9"
    assert (ws_of(env) / ".openmono" / "settings.json").is_file()
    run(["config", "set", "llm.api_key", "s3cret"], env)
    assert run(["config", "get", "llm.api_key"], env).out.strip() == "********"
    bad = run(["config", "set", "max_iterations", "zero"], env)
    assert bad.code == 1 and "max_iterations" in bad.err


def test_doctor_passes_against_a_live_server(
    scripted_llm: ScriptedFactory, env: dict[str, str]
) -> None:
    llm = scripted_llm([], api_key=KEY, n_ctx=4096)
    r = run(["doctor"], llm_env(env, llm))
    assert r.code == 0, r.out
    assert "✓ endpoint" in r.out and "✓ model: scripted-model · n_ctx 4096" in r.out
    assert "✓ workspace" in r.out and "all checks passed" in r.out
    assert "✓ tools: native · auto: the chat template renders tools (from props)" in r.out
    assert "– language servers: python (basedpyright-langserver)" in r.out


def test_doctor_names_the_tool_protocol_and_fails_a_blind_native(
    scripted_llm: ScriptedFactory, env: dict[str, str]
) -> None:
    llm = scripted_llm([], api_key=KEY, supports_tools=False)
    r = run(["doctor"], llm_env(env, llm))
    assert r.code == 0, r.out
    assert "✓ tools: prompted · auto: the chat template has no tool support" in r.out
    assert "grammar on" in r.out
    r = run(["doctor"], {**llm_env(env, llm), "OPENMONO_LLM_TOOL_PROTOCOL": "native"})
    assert r.code == 1 and "✗ tools: native" in r.out and "cannot see them" in r.out


def test_doctor_fails_clearly(scripted_llm: ScriptedFactory, env: dict[str, str]) -> None:
    llm = scripted_llm([], api_key=KEY)
    r = run(["doctor"], {**llm_env(env, llm), "LLAMA_API_KEY": "wrong"})
    assert r.code == 1
    assert "✗ model: the key was refused" in r.out
    r = run(["--endpoint", f"http://127.0.0.1:{free_port()}", "doctor"], env)
    assert r.code == 1 and "✗ endpoint" in r.out
    r = run(["doctor"], {**env, "OPENMONO_BROKER_URL": f"redis://127.0.0.1:{free_port()}/0"})
    assert "✗ broker" in r.out


def test_stack_commands_are_still_registered(env: dict[str, str]) -> None:
    r = run(["--help"], env)
    for name in ("up", "down", "status", "sessions", "config", "doctor"):
        assert f"  {name} " in r.out, name


def test_sigint_with_json_output_still_prints_a_result(
    scripted_llm: ScriptedFactory, env: dict[str, str]
) -> None:
    text = "".join(f"word{i} " for i in range(2000))
    llm = scripted_llm(
        [Turn(text=text, chunk_chars=6, chunk_delay_s=0.02)], api_key=KEY, n_ctx=32768
    )
    proc = subprocess.Popen(
        [OPENMONO, "-p", "talk", "--output-format", "json"],
        env=llm_env(env, llm), cwd=ws_of(env), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not llm.chat_requests and time.monotonic() < deadline:
            assert proc.poll() is None
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 130
    data = json.loads(out)
    assert data["ok"] is False and data["reason"] == "cancelled"
    assert text.startswith(data["result"])


def test_an_interactive_command_is_refused_unless_the_workspace_names_it(
    scripted_llm: ScriptedFactory, env: dict[str, str], tmp_path: Path
) -> None:
    """`-p "/map"` used to reach the model as text (found on the newcomer walk)."""
    llm = scripted_llm([Turn(text="the map command's answer")], api_key=KEY, n_ctx=32768)
    e = llm_env(env, llm)
    r = run(["-p", "/map"], e)
    assert r.code == 2, r.err
    assert "/map is a command of the interactive session" in r.err
    assert llm.chat_requests == []
    # a user's own command of that name is what `/map` means here, so it runs
    commands = tmp_path / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "map.md").write_text("Draw a map of $ARGUMENTS.\n")
    r = run(["-p", "/map the docs"], e)
    assert r.code == 0, r.err
    assert r.out == "the map command's answer\n"
    assert "Draw a map of the docs." in str(llm.chat_requests[0].json["messages"][-1]["content"])
