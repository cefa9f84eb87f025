"""Crash safety: a writer killed with SIGKILL mid-stream leaves a file that loads and appends."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from openmono.sessions import SessionMessage, SessionWriter, load_session

WRITER = r"""
import os
import sys
from pathlib import Path
from openmono.sessions import SessionHeader, SessionMessage, SessionWriter
path, parent = Path(sys.argv[1]), int(sys.argv[2])
w = SessionWriter(path, SessionHeader(working_directory="/w", model="m"))
i = 0
# bounded (80 MB), and it stops when the test is gone: a run killed before its `finally`
# once left this writer filling the disk (67 GB)
while i < 400 and os.getppid() == parent:
    # big messages so that the kill is likely to land inside a write
    w.append(SessionMessage(role="assistant", content=f"message {i} " + "x" * 200_000))
    i += 1
"""


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def test_kill_9_mid_stream_then_load_and_resume(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(os.getpid())], start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while _lines(path) < 6:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "writer made no progress"
            time.sleep(0.01)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
        if proc.stderr:
            proc.stderr.close()
    complete = _lines(path)
    loaded = load_session(path)
    # every complete line is a message (minus the header); a torn tail, if any, is skipped
    assert len(loaded.messages) == complete - 1
    assert loaded.skipped_lines <= 1
    for i, message in enumerate(loaded.messages):
        assert message.content is not None and message.content.startswith(f"message {i} ")
    with SessionWriter(path, loaded.header) as w:
        w.append(SessionMessage(role="user", content="after the crash"))
    again = load_session(path)
    assert again.skipped_lines == 0
    assert again.messages[-1].content == "after the crash"
    assert len(again.messages) == len(loaded.messages) + 1
