"""Run a shell command so that everything it starts ends with the call (Bash, foreground).

The command runs as `bash -c COMMAND` under a small outer shell that is a child subreaper
(`PR_SET_CHILD_SUBREAPER`, set before exec; the spawn server forks it, `openmono_worker.sandbox`):

    this process ── outer bash (subreaper, own session) ── bash -c COMMAND ── ...

A process the command leaves behind, even after `setsid` and a double fork, is re-parented to the
outer shell, never to PID 1, so it stays a descendant we can find. The outer shell runs the
command in the foreground, reports its status on a socket (`$?`: 128+N for death by signal N) and
then waits until we close that socket. In between, and at a timeout or a cancellation, we kill
every descendant of the outer shell (`sweep`), then let it exit. Nothing the command started
outlives the call, whatever session or process group it moved to.

What this does not stop: a command that kills the outer shell itself (`kill -9 $PPID`) loses
its leftovers to PID 1 (or, in the Celery worker, to the worker's subreaper). A sandboxed
command cannot, on Landlock ABI 6+ (signal scope); a cgroup would close it for every command.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import socket
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from openmono_worker.sandbox import Confinement, spawn
from openmono_worker.tools._process import CappedBuffer, Completed, kill_group

_TICK_S = 0.05
# After the command's processes are killed, how long we read what is still in the pipe.
_DRAIN_S = 0.5
_SWEEP_ROUNDS = 200
# The outer shell: run the command (without the control socket, and with the outer shell's own
# stderr, so a death by signal is not announced by us), report, wait to be let go. Job control
# (`set -m`) gives the command a process group of its own, so its `$$` is its group, as when it
# ran alone (`kill -- -$$` stops what it started).
OUTER = (
    'set -m; ctl=$2; exec {err}>&2 2>/dev/null; bash -c "$1" {ctl}>&- 2>&"$err" {err}>&-; s=$?; '
    'printf "%s\\n" "$s" >&"$ctl"; read -r -u "$ctl" _; exit "$s"'
)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")  # noqa: PTH208 -- a sweep reads many
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:  # noqa: PTH123
                found += [int(p) for p in fh.read().split()]
        except (OSError, ValueError):
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:  # noqa: PTH123
            text = fh.read()
    except OSError:
        return False
    return text[text.rfind(")") + 2 :][:1] not in ("Z", "X", "")


def descendants(pid: int) -> list[int]:
    """Live descendants of `pid`, parents before children."""
    found: list[int] = []
    todo = _children(pid)
    while todo:
        current = todo.pop(0)
        if _alive(current):
            found.append(current)
        todo.extend(_children(current))
    return found


def sweep(pid: int) -> int:
    """SIGKILL every descendant of `pid` until none is left alive; `pid` lives on. How many."""
    killed = 0
    for _ in range(_SWEEP_ROUNDS):
        victims = descendants(pid)
        if not victims:
            break
        for victim in victims:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(victim, signal.SIGKILL)
        killed += len(victims)
        time.sleep(0.001)
    return killed


def _wait_gone(pid: int, timeout_s: float) -> bool:
    """`pid` is gone (or a zombie); it was let go, so this is usually the first look."""
    deadline = time.monotonic() + timeout_s
    pause = 0.0002
    while _alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.01)
    return True


def run_shell(
    command: str,
    *,
    cwd: Path,
    timeout_s: float,
    cancel: threading.Event,
    max_bytes: int,
    env: Mapping[str, str],
    confinement: Confinement,
) -> Completed:
    """Run `command` to completion, timeout or cancellation (see the module docstring).

    `exit_code` is None after a timeout or a cancellation, and when the outer shell was killed
    before it could report (then `timed_out` and `cancelled` are both False)."""
    start = time.monotonic()
    deadline = start + timeout_s
    ours, theirs = socket.socketpair()
    read_end, write_end = os.pipe()
    try:
        pid = spawn(
            ["bash", "-c", OUTER, "bash", command, "<ctl>"],
            cwd=cwd,
            env=env,
            stdout=write_end,
            keep=(theirs.fileno(),),
            fd_args={5: 0},
            confinement=confinement,
        )
    except BaseException:
        ours.close()
        os.close(read_end)
        raise
    finally:
        theirs.close()
        os.close(write_end)
    out = CappedBuffer(max_bytes)
    status = bytearray()
    sel = selectors.DefaultSelector()
    os.set_blocking(read_end, False)
    sel.register(read_end, selectors.EVENT_READ, out)
    sel.register(ours, selectors.EVENT_READ, status)
    timed_out = cancelled = False
    try:
        # Until the status line, or the socket's EOF (the outer shell is gone).
        while b"\n" not in status and ours in _watched(sel):
            if cancel.is_set():
                cancelled = True
                break
            now = time.monotonic()
            if now >= deadline:
                timed_out = True
                break
            _read_ready(sel, min(_TICK_S, deadline - now))
        sweep(pid)
        if ours in _watched(sel):
            sel.unregister(ours)
        ours.close()  # lets the outer shell go: its exit closes the pipe's last writer
        drain_until = time.monotonic() + _DRAIN_S
        while sel.get_map() and time.monotonic() < drain_until:
            _read_ready(sel, _TICK_S)
    finally:
        ours.close()
        if not _wait_gone(pid, 1.0):
            sweep(pid)
            kill_group(pid)
        for key in list(sel.get_map().values()):
            sel.unregister(key.fileobj)
        sel.close()
        os.close(read_end)
    code: int | None = None
    if not (timed_out or cancelled):
        text = bytes(status).split(b"\n", 1)[0].strip()
        code = int(text) if text.isdigit() else None
    return Completed(code, out, None, timed_out, cancelled, time.monotonic() - start)


def _watched(sel: selectors.BaseSelector) -> list[object]:
    return [key.fileobj for key in sel.get_map().values()]


def _read_ready(sel: selectors.BaseSelector, wait_s: float) -> None:
    for key, _ in sel.select(max(wait_s, 0.0)):
        buf: bytearray | CappedBuffer = key.data
        try:
            chunk = os.read(key.fd, 65536)
        except BlockingIOError:
            continue
        except OSError:
            chunk = b""
        if chunk:
            if isinstance(buf, CappedBuffer):
                buf.write(chunk)
            else:
                buf += chunk
        else:
            sel.unregister(key.fileobj)
