"""Kill what a pool process started, from the worker's main process (Linux `/proc`).

Tools start their commands in their own sessions (so the tool can kill the whole group), which also
means those groups survive a SIGKILL of the pool process that started them. Before the worker kills
a pool process (hard time limit, revoke with terminate) it freezes it, kills the process group of
every descendant, and lets it go again: nothing the call started outlives it. Background jobs of
earlier calls (Bash `background: true`, each under its keeper) are not the call's: they are spared,
and live on as children of the worker's main process (`_reaper`).
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from openmono_worker.tools import is_job_keeper

_PROC = Path("/proc")


def _parent_map() -> dict[int, int]:
    """pid -> ppid for every process we can see."""
    parents: dict[int, int] = {}
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # it exited while we looked
        # The command name is in parentheses and may contain spaces: split after the last ')'.
        fields = stat[stat.rfind(")") + 2 :].split()
        with contextlib.suppress(IndexError, ValueError):
            parents[int(entry.name)] = int(fields[1])
    return parents


def descendants(pid: int, *, spare_jobs: bool = False) -> list[int]:
    """Every live descendant of `pid` (children first), empty where /proc is missing;
    `spare_jobs`: without background jobs and what runs below them."""
    if not _PROC.is_dir():
        return []
    children: dict[int, list[int]] = {}
    for child, parent in _parent_map().items():
        children.setdefault(parent, []).append(child)
    found: list[int] = []
    todo = list(children.get(pid, []))
    while todo:
        current = todo.pop(0)
        if spare_jobs and is_job_keeper(current):
            continue
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def kill_descendants(pid: int) -> list[int]:
    """SIGKILL the process groups (and the processes) below `pid`, background jobs spared;
    `pid` itself lives on.

    `pid` is stopped while we look, so it cannot start anything new in between. The groups of
    this process and of `pid` (the worker's own group) are never signalled as a whole.
    """
    spared = {os.getpgrp()}
    with contextlib.suppress(ProcessLookupError):
        spared.add(os.getpgid(pid))
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGSTOP)
    try:
        victims = descendants(pid, spare_jobs=True)
        groups: set[int] = set()
        for victim in victims:
            with contextlib.suppress(ProcessLookupError):
                groups.add(os.getpgid(victim))
        for group in groups - spared:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)
        for victim in victims:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(victim, signal.SIGKILL)
        return victims
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
