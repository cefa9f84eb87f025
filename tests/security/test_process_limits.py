"""Finding 10: `setsid` escaped the kill at the end of a call, and commands had no rlimits.

Through the real Bash tool, in-process and on a real Celery worker over a real Redis: whatever a
command leaves running (a `setsid` child, a double fork into a new session, `nohup`) is dead when
the call returns; commands run under the worker's limits (CPU time, file size, processes), set
as hard limits; background jobs still outlive their call, under the same limits.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from openmono.executor.celery import CeleryExecutor
from openmono_contracts import ToolRequest, ToolResult

from tests.support.celery_worker import WorkerStack, celery_executor, tool_request, worker_stack
from tests.support.tool_calls import ToolBench, make_bench
from tests.support.tool_suite import pid_alive

pytestmark = pytest.mark.integration

# Three ways out of the command's process group, each recording the escaped pid.
ESCAPES = {
    "setsid": "setsid sleep 300 & echo $! > setsid.pid",
    "double fork": "( setsid sh -c 'sleep 300 & echo $! > double.pid' & )",
    "nohup in a subshell": "(nohup sleep 300 > /dev/null 2>&1 & echo $! > nohup.pid)",
}
ULIMITS = "for o in {}; do ulimit $o; done | tr '\\n' ' '"
LIMITS = {"WORKER_LIMITS_CPU_S": "7", "WORKER_LIMITS_FILE_MB": "1", "WORKER_LIMITS_PROCESSES": "40"}


def _dead_soon(pid: int, timeout_s: float = 3.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not pid_alive(pid)


def _escaped(ws: Path) -> dict[str, int]:
    pids = {}
    for name in ("setsid", "double", "nohup"):
        text = (ws / f"{name}.pid").read_text().strip()
        pids[name] = int(text)
    return pids


def _kill(pids: dict[str, int]) -> None:
    for pid in pids.values():
        if pid_alive(pid):
            os.kill(pid, 9)


@pytest.fixture
def tb(tmp_path: Path) -> ToolBench:
    return make_bench(tmp_path)


def test_nothing_a_command_leaves_behind_survives_the_call(tb: ToolBench) -> None:
    r = tb.call("Bash", command="; ".join([*ESCAPES.values(), "sleep 0.3", "echo done"]))
    assert r.ok, r
    pids = _escaped(tb.ws)
    try:
        alive = [name for name, pid in pids.items() if not _dead_soon(pid)]
        assert alive == [], f"escaped the end of the call: {alive}"
    finally:
        _kill(pids)


def test_a_timed_out_command_loses_its_escapees_too(tb: ToolBench) -> None:
    r = tb.call("Bash", command=ESCAPES["setsid"] + "; sleep 100", timeout_ms=800)
    assert not r.ok and "timed out" in (r.error or "")
    pid = int(tb.read("setsid.pid"))
    try:
        assert _dead_soon(pid)
    finally:
        _kill({"setsid": pid})


def test_limits_are_the_settings_and_hard(tmp_path: Path) -> None:
    tb = make_bench(tmp_path, limits={"cpu_s": 7, "file_mb": 1, "processes": 40})
    r = tb.call("Bash", command=ULIMITS.format("-St -Ht -Sf -Hf -Su -Hu"))
    assert r.ok and r.output.startswith("7 8 1024 1024 40 40 "), r.output  # -f counts KiB


def test_a_file_past_the_size_limit_is_cut(tmp_path: Path) -> None:
    tb = make_bench(tmp_path, limits={"file_mb": 1})
    r = tb.call("Bash", command="head -c 3000000 /dev/zero > big")
    assert not r.ok and "signal 25" in (r.error or ""), r  # SIGXFSZ
    assert (tb.ws / "big").stat().st_size == 1024 * 1024


def test_a_spinning_command_is_stopped_by_cpu_time(tmp_path: Path) -> None:
    tb = make_bench(tmp_path, limits={"cpu_s": 1})
    start = time.monotonic()
    r = tb.call("Bash", command="while :; do :; done", timeout_ms=60_000)
    assert not r.ok and "signal 24" in (r.error or ""), r  # SIGXCPU
    assert time.monotonic() - start < 30


FORKS = (
    "import os, time\n"
    "started = 0\n"
    "try:\n"
    "    for _ in range(60):\n"
    "        if os.fork() == 0:\n"
    "            time.sleep(30)\n"
    "            os._exit(0)\n"
    "        started += 1\n"
    "except BlockingIOError:\n"
    "    print('refused after', started)\n"
)


def test_the_process_limit_stops_a_fork_storm(tmp_path: Path) -> None:
    # The kernel never applies RLIMIT_NPROC to uid 0: as root, the storm runs as `nobody`.
    tb = make_bench(tmp_path, limits={"processes": 20})
    storm = f'/usr/bin/python3 -c "{FORKS}"'
    if os.geteuid() == 0:
        storm = f"cd / && setpriv --reuid=65534 --regid=65534 --clear-groups {storm}"
    r = tb.call("Bash", command=storm, timeout_ms=60_000)
    assert "refused after" in r.output, r.output
    assert int(r.output.split("refused after ")[1].split()[0]) < 20


def test_background_jobs_outlive_the_call_under_the_limits(tmp_path: Path) -> None:
    tb = make_bench(tmp_path, limits={"file_mb": 1})
    r = tb.call("Bash", command="ulimit -f; sleep 300", background=True)
    assert r.ok, r
    pid = int(r.output.split("pid ")[1].split()[0])
    try:
        time.sleep(0.3)
        assert pid_alive(pid), "a background job must outlive its call"
        assert r.artifact is not None
        deadline = time.monotonic() + 10
        while "1024" not in Path(r.artifact).read_text():
            assert time.monotonic() < deadline, Path(r.artifact).read_text()
            time.sleep(0.05)
    finally:
        os.killpg(pid, 9)


# --- the same through a real Celery worker on a real Redis --------------------------------------


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerStack]:
    with worker_stack(tmp_path_factory.mktemp("limits"), env=LIMITS) as s:
        yield s


@pytest.fixture
async def celery_ex(stack: WorkerStack) -> AsyncIterator[CeleryExecutor]:
    async with celery_executor(stack.redis.url) as ex:
        yield ex


async def _run(ex: CeleryExecutor, req: ToolRequest) -> ToolResult:
    return await asyncio.wait_for(ex.run(req), 60)


async def test_celery_worker_kills_what_a_call_leaves_behind(
    celery_ex: CeleryExecutor, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    command = "; ".join([*ESCAPES.values(), "sleep 0.3", "echo done"])
    r = await _run(celery_ex, tool_request("Bash", {"command": command}, ws))
    assert r.ok, r
    pids = _escaped(ws)
    try:
        alive = [name for name, pid in pids.items() if not _dead_soon(pid)]
        assert alive == [], f"escaped the end of the call: {alive}"
    finally:
        _kill(pids)


async def test_celery_worker_applies_its_limits(celery_ex: CeleryExecutor, tmp_path: Path) -> None:
    command = ULIMITS.format("-Ht -Hf -Hu")
    r = await _run(celery_ex, tool_request("Bash", {"command": command}, tmp_path / "ws"))
    assert r.ok and r.output.startswith("8 1024 40 "), r.output
