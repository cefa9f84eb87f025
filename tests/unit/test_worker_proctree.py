"""`kill_descendants`: what a pool process started dies, in any session; the process lives on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from openmono_worker._proctree import descendants, kill_descendants

from tests.support.tool_suite import pid_alive

# A stand-in for a pool process: starts a command in its own session (as Bash does), which
# starts a grandchild, plus a plain child; writes their pids, then waits.
PARENT = """
import subprocess, sys, time
own = subprocess.Popen(["bash", "-c", "sleep 60 & echo $! > grandchild.pid; wait"],
                       start_new_session=True)
plain = subprocess.Popen(["sleep", "60"])
open("pids", "w").write(f"{own.pid} {plain.pid}")
time.sleep(60)
"""


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_worker_kill_descendants_kills_other_sessions_too(tmp_path: Path) -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], cwd=tmp_path, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not ((tmp_path / "pids").exists() and (tmp_path / "grandchild.pid").exists()):
            assert time.monotonic() < deadline, "the process tree never started"
            time.sleep(0.02)
        while not (tmp_path / "grandchild.pid").read_text().strip():
            time.sleep(0.02)
        own, plain = (int(p) for p in (tmp_path / "pids").read_text().split())
        grandchild = int((tmp_path / "grandchild.pid").read_text())
        assert {own, plain, grandchild} <= set(descendants(parent.pid))

        killed = kill_descendants(parent.pid)

        assert {own, plain, grandchild} <= set(killed)
        deadline = time.monotonic() + 5
        while any(pid_alive(p) for p in (own, plain, grandchild)):
            assert time.monotonic() < deadline, "a descendant survived"
            time.sleep(0.02)
        # The process itself was only paused while we looked: it runs on.
        assert parent.poll() is None and _state(parent.pid) != "T"
    finally:
        os.killpg(parent.pid, signal.SIGKILL)
        parent.wait(5)


def test_worker_kill_descendants_of_a_leaf_is_a_no_op() -> None:
    leaf = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        assert kill_descendants(leaf.pid) == []
        assert leaf.poll() is None and _state(leaf.pid) != "T"
    finally:
        leaf.kill()
        leaf.wait(5)


# A pool process stand-in with a background job (Bash `background: true`, under its keeper) from an
# earlier call, and the current call's command.
WITH_JOB = """
import subprocess, sys, time
from pathlib import Path
from openmono_worker.tools._jobs import start_job
job = start_job(["sleep", "60"], cwd=Path("."), log=Path("job.log"))
call = subprocess.Popen(["sleep", "60"], start_new_session=True)
open("pids", "w").write(f"{job.pid} {call.pid}")
time.sleep(60)
"""


def test_worker_kill_descendants_spares_background_jobs(tmp_path: Path) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", WITH_JOB], cwd=tmp_path, start_new_session=True
    )
    job = 0
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "pids").exists():
            assert time.monotonic() < deadline, "the process tree never started"
            time.sleep(0.02)
        job, call = (int(p) for p in (tmp_path / "pids").read_text().split())
        while not descendants(job):  # the keeper starts its command
            assert time.monotonic() < deadline, "the job's command never started"
            time.sleep(0.02)
        [command] = descendants(job)
        killed = kill_descendants(parent.pid)
        assert call in killed and job not in killed and command not in killed
        deadline = time.monotonic() + 5
        while pid_alive(call):
            assert time.monotonic() < deadline, "the call's command survived"
            time.sleep(0.02)
        assert pid_alive(job) and pid_alive(command)
    finally:
        os.killpg(parent.pid, signal.SIGKILL)
        if job:
            os.killpg(job, signal.SIGKILL)
        parent.wait(5)
