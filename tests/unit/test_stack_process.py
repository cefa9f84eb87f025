"""Process bookkeeping of the native stack: whole groups stopped, a reused pid never signalled."""

from __future__ import annotations

import os
import sys
import time
from dataclasses import replace
from pathlib import Path

from openmono.stack.process import is_ours_and_alive, read_pidfile, spawn, stop_group


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_stop_group_kills_children_and_grandchildren(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    # the leader starts a grandchild that ignores SIGTERM: only the group SIGKILL ends it
    script = (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen(['bash', '-c', 'trap \"\" TERM; sleep 300 & echo $! > "
        f"{marker}; wait'])\n"
        "time.sleep(300)\n"
    )
    record = spawn(
        [sys.executable, "-c", script],
        tmp_path / "x.log",
        dict(os.environ),
        tmp_path,
        tmp_path / "x.json",
    )
    deadline = time.monotonic() + 20
    while not (marker.exists() and marker.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    grandchild = int(marker.read_text())
    assert _alive(grandchild)
    assert read_pidfile(tmp_path / "x.json") == record
    assert stop_group(record, grace_s=1.0)
    deadline = time.monotonic() + 5
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)
    assert not is_ours_and_alive(record)


def test_a_reused_pid_is_not_ours(tmp_path: Path) -> None:
    record = spawn(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        tmp_path / "y.log",
        dict(os.environ),
        tmp_path,
        tmp_path / "y.json",
    )
    try:
        assert is_ours_and_alive(record)
        # same pid, other start time: what a recycled pid looks like
        impostor = replace(record, start_ticks=record.start_ticks + 1)
        assert not is_ours_and_alive(impostor)
        assert not stop_group(impostor)
        assert is_ours_and_alive(record)
    finally:
        stop_group(record, grace_s=1.0)


def test_unreadable_pidfile_is_none(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert read_pidfile(bad) is None
    assert read_pidfile(tmp_path / "missing.json") is None
