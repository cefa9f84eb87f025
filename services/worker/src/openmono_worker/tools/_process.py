"""Run a command in its own process group, with a deadline, a cancel flag and an output cap.

Why not `subprocess.run(timeout=...)`: it waits for EOF on the pipes, so a grandchild that keeps
stdout open (`sleep 100 | cat &`) holds the call long after the deadline, and its timeout kills only
the direct child. Here the pipes are read without blocking, the deadline and the cancel flag are
checked every 50 ms, and the whole process group gets SIGKILL on timeout, on cancel, and also after
a normal exit (so nothing the command left behind keeps running). A process that moved itself to
another session (`setsid`) escapes the group; we stop reading its pipe shortly after the command
ends.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

_TICK_S = 0.05
# After the command exits, how long we keep reading output still written by what it left behind.
_EXIT_GRACE_S = 0.25
# After SIGKILL, how long we read what is still in the pipes.
_DRAIN_S = 0.5


class CappedBuffer:
    """Keeps the first `limit - limit // 4` bytes and the last `limit // 4`; counts the rest."""

    def __init__(self, limit: int) -> None:
        self.tail_keep = limit // 4
        self.head_keep = limit - self.tail_keep
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def write(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_keep - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.tail_keep:
                del self.tail[: len(self.tail) - self.tail_keep]

    @property
    def dropped(self) -> int:
        return max(0, self.total - len(self.head) - min(len(self.tail), self.tail_keep))

    def text(self) -> str:
        tail = bytes(self.tail[-self.tail_keep :]) if self.tail_keep else b""
        if self.dropped:
            middle = f"\n[... {self.dropped} bytes of output omitted ...]\n".encode()
            data = bytes(self.head) + middle + tail
        else:
            data = bytes(self.head) + bytes(self.tail)
        return data.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class Completed:
    """How a command ended. `exit_code` is negative for death by signal (as in subprocess)."""

    exit_code: int | None
    stdout: CappedBuffer
    stderr: CappedBuffer | None
    timed_out: bool
    cancelled: bool
    elapsed_s: float


def kill_group(pgid: int) -> None:
    """SIGKILL every process of the group; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def run_command(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout_s: float,
    cancel: threading.Event,
    max_bytes: int,
    env: Mapping[str, str] | None = None,
    merge_stderr: bool = True,
) -> Completed:
    """Run `argv` to completion, timeout or cancellation; the process group is dead on return."""
    start = time.monotonic()
    deadline = start + timeout_s
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=None if env is None else dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
        start_new_session=True,
    )
    out = CappedBuffer(max_bytes)
    err = None if merge_stderr else CappedBuffer(max_bytes)
    sel = selectors.DefaultSelector()
    for pipe, buf in ((proc.stdout, out), (proc.stderr, err)):
        if pipe is not None and buf is not None:
            os.set_blocking(pipe.fileno(), False)
            sel.register(pipe, selectors.EVENT_READ, buf)
    timed_out = cancelled = False
    exited_at: float | None = None
    try:
        while sel.get_map():
            now = time.monotonic()
            if cancel.is_set():
                cancelled = True
                break
            if now >= deadline:
                timed_out = True
                break
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > _EXIT_GRACE_S:
                break
            _read_ready(sel, min(_TICK_S, max(deadline - now, 0.0)))
        # All pipes at EOF: the command is exiting (or closed its output and runs on).
        while not (timed_out or cancelled) and proc.poll() is None:
            if cancel.is_set():
                cancelled = True
            elif time.monotonic() >= deadline:
                timed_out = True
            else:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(min(_TICK_S, max(deadline - time.monotonic(), 0.0)))
        kill_group(proc.pid)
        drain_until = time.monotonic() + _DRAIN_S
        while sel.get_map() and time.monotonic() < drain_until:
            _read_ready(sel, _TICK_S)
    finally:
        kill_group(proc.pid)
        for key in list(sel.get_map().values()):
            sel.unregister(key.fileobj)
        sel.close()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.wait()
    code = None if (timed_out or cancelled) else proc.returncode
    return Completed(code, out, err, timed_out, cancelled, time.monotonic() - start)


def _read_ready(sel: selectors.BaseSelector, wait_s: float) -> None:
    for key, _ in sel.select(wait_s):
        buf: CappedBuffer = key.data
        try:
            chunk = os.read(key.fd, 65536)
        except BlockingIOError:
            continue
        if chunk:
            buf.write(chunk)
        else:
            sel.unregister(key.fileobj)
