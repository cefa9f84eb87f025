"""The worker's main process adopts what tool calls leave behind, and waits for it (Linux).

Tool commands run in sessions of their own, and what they leave running (`cmd &`, a double fork,
`setsid`, a background job whose pool process was recycled) is orphaned when its parent exits. The
kernel gives an orphan to its nearest ancestor that declared itself a "child subreaper", else to
PID 1. `adopt_orphans` makes the worker's main process that ancestor and starts a thread that
waits for such children as they end, so none stays a zombie: not under the worker, and not under a
PID 1 that never waits (a container started without an init, where the worker is PID 1 itself).

The pool processes are children of the main process too, and billiard waits for them by pid: an
exit status taken from under it would be lost. They are told apart by session. A pool process
shares the main process's session; every tool command starts a new one, and a session can only
be created, never joined, so nothing below a tool command can ever be in the main one.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from pathlib import Path

_PR_SET_CHILD_SUBREAPER = 36
# How often the thread looks for ended children: an orphan's zombie lasts at most this long.
REAP_EVERY_S = 0.5

_started: list[int] = []  # the pid that started the thread (a fork does not inherit threads)


def _become_subreaper() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, session) of `pid` from /proc; None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may contain anything: split after the last ')'.
    fields = text[text.rfind(")") + 2 :].split()
    try:
        return fields[0], int(fields[3])
    except (IndexError, ValueError):
        return None


def children() -> list[int]:
    """The children of this process (every thread's), from /proc."""
    found: list[int] = []
    pid = os.getpid()
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError, ValueError):
                found += [int(p) for p in (task / "children").read_text().split()]
    return found


def reap_orphans() -> list[int]:
    """Wait for every ended child of this process that is not in its session; their pids."""
    own_session = os.getsid(0)
    reaped: list[int] = []
    for child in children():
        stat = _stat(child)
        if stat is None or stat[0] != "Z" or stat[1] == own_session:
            continue
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(child, os.WNOHANG)[0] == child:
                reaped.append(child)
    return reaped


def _loop(stop: threading.Event) -> None:
    while not stop.wait(REAP_EVERY_S):
        reap_orphans()


def adopt_orphans() -> bool:
    """Make this process the subreaper of what it starts and reap it; False where Linux says no.

    Idempotent per process. Call it in the worker's main process only (not in a pool process:
    there, `subprocess` waits for its own children, and session alone could not tell them apart).
    """
    if os.getpid() in _started:
        return True
    if not _become_subreaper():
        return False
    _started.append(os.getpid())
    thread = threading.Thread(
        target=_loop, args=(threading.Event(),), name="openmono-reaper", daemon=True
    )
    thread.start()
    return True
