"""Bash against real processes: exit codes, timeouts with pipe-holding grandchildren, cancellation,
output caps, background runs, environment. Every test checks that nothing it started survives."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from openmono_contracts import ToolRequest, ToolResult
from openmono_worker import run_tool

from tests.support.tool_calls import ToolBench, make_bench
from tests.support.tool_suite import pid_alive

pytestmark = pytest.mark.integration


@pytest.fixture
def tb(tmp_path: Path) -> Iterator[ToolBench]:
    bench = make_bench(tmp_path)
    yield bench
    # Whatever a test recorded in *.pid files must be gone by now (background ones are killed).
    for pid_file in bench.ws.glob("*.pid"):
        text = pid_file.read_text().strip()
        if text:
            assert not pid_alive(int(text)), f"{pid_file.name}: process {text} survived"


def wait_dead(pid: int, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not pid_alive(pid)


def test_success_and_output_order(tb: ToolBench) -> None:
    r = tb.call("Bash", command="echo one; echo two >&2; echo three")
    assert r.ok and r.output == "one\ntwo\nthree\n[exit code 0]"


def test_nonzero_exit_is_not_ok_but_keeps_output(tb: ToolBench) -> None:
    r = tb.call("Bash", command="echo partial; exit 7")
    assert not r.ok and r.error == "command failed (exit code 7)"
    assert r.output == "partial\n[exit code 7]"


def test_runs_in_the_workspace(tb: ToolBench) -> None:
    assert tb.call("Bash", command="pwd").output.startswith(f"{tb.ws}\n")


def test_no_output(tb: ToolBench) -> None:
    assert tb.call("Bash", command="true").output == "(no output)\n[exit code 0]"


def test_killed_by_signal(tb: ToolBench) -> None:
    r = tb.call("Bash", command="kill -TERM $$")
    assert not r.ok and "signal 15" in (r.error or "")


def test_timeout_with_grandchild_holding_the_pipe(tb: ToolBench) -> None:
    cmd = "sleep 100 | cat & echo $! > cat.pid; sleep 100"
    start = time.monotonic()
    r = tb.call("Bash", command=cmd, timeout_ms=1000)
    took = time.monotonic() - start
    assert not r.ok and r.error == "command timed out after 1 s"
    assert took < 1.0 + 2.0, took
    assert wait_dead(int(tb.read("cat.pid")))


def test_background_grandchild_does_not_hold_a_finished_command(tb: ToolBench) -> None:
    # `bash` exits at once; the pipe stays open in `sleep | cat`. We return and kill the group.
    start = time.monotonic()
    r = tb.call("Bash", command="sleep 100 | cat & echo $! > cat.pid; echo done")
    assert time.monotonic() - start < 5.0  # not the 100 s the pipe stays open
    assert r.ok and r.output == "done\n[exit code 0]"
    assert wait_dead(int(tb.read("cat.pid")))


def test_call_timeout_caps_timeout_ms(tb: ToolBench) -> None:
    r = tb.call("Bash", command="sleep 30", timeout_ms=600_000, timeout_s=0.5)
    assert not r.ok and "timed out after 0.5 s" in (r.error or "")


def test_timeout_ms_is_bounded(tb: ToolBench) -> None:
    r = tb.call("Bash", command="true", timeout_ms=600_001)
    assert not r.ok and "timeout_ms" in (r.error or "")


def test_cancel_kills_the_group(tb: ToolBench) -> None:
    cancel = threading.Event()
    req = ToolRequest(
        tool="Bash",
        params={"command": "sleep 100 & echo $! > child.pid; wait"},
        call_id="c",
        session_id="s",
        workspace=str(tb.ws),
    )
    results = []
    worker = threading.Thread(target=lambda: results.append(run_tool(req, cancel=cancel)))
    worker.start()
    pid_file = tb.ws / "child.pid"
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    start = time.monotonic()
    cancel.set()
    worker.join(10)
    assert not worker.is_alive() and time.monotonic() - start < 5
    [r] = results
    assert not r.ok and r.error == "cancelled"
    assert wait_dead(int(pid_file.read_text()))


def test_output_cap_keeps_head_and_tail(tmp_path: Path) -> None:
    tb = make_bench(tmp_path, bash_max_output_bytes=4096)
    r = tb.call("Bash", command="seq 1 100000")
    assert r.ok and r.truncated
    assert r.output.startswith("1\n2\n3\n") and "bytes of output omitted" in r.output
    assert r.output.endswith("99999\n100000\n[exit code 0]")


def test_big_output_goes_to_an_artifact(tb: ToolBench) -> None:
    r = tb.call("Bash", command="seq 1 50000")
    assert r.ok and r.truncated and r.artifact
    assert Path(r.artifact).read_text().endswith("49999\n50000\n[exit code 0]")
    assert r.output.startswith("1\n2\n") and r.output.endswith("50000\n[exit code 0]")


def test_environment_hides_openmono_secrets(tb: ToolBench, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLAMA_API_KEY", "sekrit")
    monkeypatch.setenv("OPENMONO_BROKER_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("SOME_USER_VAR", "visible")
    out = tb.call("Bash", command="env").output
    assert "sekrit" not in out and "OPENMONO_" not in out
    assert "SOME_USER_VAR=visible" in out and "GIT_TERMINAL_PROMPT=0" in out


def test_environment_hides_every_secret_name(
    tb: ToolBench, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("LLAMA_UPSTREAM_KEY", "SEARXNG_SECRET", "FRP_AUTH_TOKEN"):
        monkeypatch.setenv(name, f"sekrit-{name}")  # what the native stack hands its worker
    assert "sekrit" not in tb.call("Bash", command="env").output


def test_python_is_the_users_not_openmonos(tb: ToolBench, monkeypatch: pytest.MonkeyPatch) -> None:
    # the finding: `uv run openmono` ran the user's `python -m pytest` with OpenMono's venv
    ours = Path(sys.prefix)
    assert sys.prefix != sys.base_prefix, "the tests run in the workspace's venv"
    monkeypatch.setenv("VIRTUAL_ENV", str(ours))  # as `uv run` and `make` leave it
    monkeypatch.setenv("PATH", f"{ours / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("UV_RUN_RECURSION_DEPTH", "1")
    monkeypatch.setenv("PYTHONPATH", f"{ours / 'lib'}{os.pathsep}/user/lib")
    script = (
        "command -v python3; python3 -c 'import sys; print(sys.prefix)'; "
        'echo "venv=[$VIRTUAL_ENV] pp=[$PYTHONPATH] uv=[$UV_RUN_RECURSION_DEPTH]"'
    )
    r = tb.call("Bash", command=script)
    assert r.ok, r.output
    which, prefix, marks = r.output.splitlines()[:3]
    assert not Path(which).resolve().is_relative_to(ours.resolve()), which
    assert Path(prefix).resolve() != ours.resolve(), prefix
    assert marks == "venv=[] pp=[/user/lib] uv=[]"


def test_stdin_is_closed(tb: ToolBench) -> None:
    start = time.monotonic()
    r = tb.call("Bash", command="cat; echo after", timeout_ms=10_000)
    assert r.ok and r.output == "after\n[exit code 0]" and time.monotonic() - start < 5


def _started(r: ToolResult) -> tuple[int, Path, Path]:
    """pid, log and status file of a background run, from what the tool said."""
    assert r.ok, r.error
    pid = int(r.output.split("pid ")[1].split()[0])
    log = Path(r.output.split("log: ")[1].splitlines()[0])
    status = Path(r.output.rsplit(" in ", 1)[1].strip())
    return pid, log, status


def _status(path: Path, timeout_s: float = 30.0) -> dict[str, object]:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"no status in {path}"
        time.sleep(0.02)
    data: dict[str, object] = json.loads(path.read_text())
    return data


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except FileNotFoundError:  # a thread that ended between the listing and the read
            continue
    return found


def test_background_run_returns_pid_and_log(tb: ToolBench) -> None:
    r = tb.call("Bash", command="echo started; sleep 100", background=True)
    pid, log, status = _started(r)
    try:
        assert log.parent == tb.settings.bash_log_dir / "sess"
        assert status.parent == log.parent and not status.exists()
        assert pid_alive(pid) and os.getpgid(pid) == pid
        deadline = time.monotonic() + 10
        while "started" not in log.read_text():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        # The model may read the log with FileRead although it lies outside the workspace.
        page = tb.call("FileRead", file_path=str(log))
        assert page.ok and "started" in page.output
    finally:
        os.killpg(pid, signal.SIGTERM)
    assert wait_dead(pid)
    # killed with its group: the keeper still tells how the command ended
    data = _status(status)
    assert data["exit_code"] is None and data["signal"] == signal.SIGTERM
    assert log.read_text().endswith("started\n[killed by signal 15]\n")


def test_background_exit_status_is_kept_and_nothing_is_left_a_zombie(tb: ToolBench) -> None:
    """The job's parent (this process) waits for it at once: no zombie until the next call."""
    runs = {
        code: _started(tb.call("Bash", command=f"printf out-{code}; exit {code}", background=True))
        for code in (0, 3)
    }
    for code, (pid, log, status) in runs.items():
        data = _status(status)
        assert data["exit_code"] == code and data["signal"] is None and data["pid"] == pid
        assert log.read_text() == f"out-{code}\n[exit code {code}]\n"
        deadline = time.monotonic() + 5
        while pid in _children(os.getpid()):
            assert time.monotonic() < deadline, f"job {pid} left unreaped"
            time.sleep(0.02)


def test_background_job_killed_hard_still_gets_a_status(tb: ToolBench) -> None:
    pid, log, status = _started(tb.call("Bash", command="echo up; sleep 100", background=True))
    deadline = time.monotonic() + 10
    while "up" not in log.read_text():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.killpg(pid, signal.SIGKILL)  # the keeper too: its parent writes what it saw
    data = _status(status)
    assert data["exit_code"] is None and data["signal"] == 9


def test_a_signal_to_the_job_pid_reaches_the_command(tb: ToolBench) -> None:
    # `wait` returns as soon as a trapped signal comes (a foreground child would delay the trap)
    cmd = "trap 'echo got-int; kill $!; exit 5' INT; echo ready; sleep 30 & wait"
    pid, log, status = _started(tb.call("Bash", command=cmd, background=True))
    deadline = time.monotonic() + 10
    while "ready" not in log.read_text():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.kill(pid, signal.SIGINT)  # the pid alone, as `kill -INT PID` does
    assert _status(status)["exit_code"] == 5
    assert log.read_text().endswith("got-int\n[exit code 5]\n")


def test_command_that_closes_its_output_still_times_out(tb: ToolBench) -> None:
    start = time.monotonic()
    r = tb.call("Bash", command="echo $$ > bash.pid; exec >&- 2>&-; sleep 100", timeout_ms=1000)
    assert not r.ok and "timed out" in (r.error or "")
    assert time.monotonic() - start < 3.0
    assert wait_dead(int(tb.read("bash.pid")))


def test_exit_code_is_never_lost_to_a_race(tb: ToolBench) -> None:
    # EOF on the pipe comes a moment before the exit status; the result must wait for the latter.
    for _ in range(20):
        r = tb.call("Bash", command="seq 1 2000 >/dev/null; echo x; exit 4")
        assert r.error == "command failed (exit code 4)", r.error
