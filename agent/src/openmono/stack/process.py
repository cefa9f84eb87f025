"""Start, identify and stop the stack's processes, each in its own process group.

A pid file records the pid and the kernel's start time of the process (from /proc), so `down` only
ever
signals a process that is still the one we started, never an unrelated one that reused the pid.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from openmono_contracts.privatefs import PRIVATE_UMASK, open_private, write_private

# Children started by this process, kept referenced so they get reaped (no zombies, and no
# ResourceWarning about a Popen collected while its detached child still runs).
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


@dataclass(frozen=True)
class PidRecord:
    """What we know about a process we started."""

    pid: int
    start_ticks: int
    command: list[str]
    started_at: float
    # what it was started with, as short hashes per name (never the values: some are keys), so
    # `up` sees a change of settings and restarts it
    config: dict[str, str] = field(default_factory=dict)


def _start_ticks(pid: int) -> int | None:
    """Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: split after the last ')'
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[19])


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def spawn(
    command: Sequence[str],
    log: Path,
    env: Mapping[str, str],
    cwd: Path,
    pidfile: Path,
    config: Mapping[str, str] | None = None,
    *,
    private: bool = True,
) -> PidRecord:
    """Start `command` detached in a new session (own process group), output appended to `log`
    (0600 in a 0700 folder, like everything under the data dir). `private`: the process runs with
    umask 077, so what it writes on its own is its owner's alone too; off for a process that
    writes the user's files (the tool worker), which keep the user's umask."""
    with open_private(log, "ab") as fh:
        fh.write(
            f"\n--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting: {' '.join(command)}\n".encode()
        )
        fh.flush()
        popen = subprocess.Popen(
            list(command),
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=dict(env),
            cwd=str(cwd),
            start_new_session=True,
            umask=PRIVATE_UMASK if private else -1,
        )
    _CHILDREN[popen.pid] = popen
    record = PidRecord(
        popen.pid, _start_ticks(popen.pid) or 0, list(command), time.time(), dict(config or {})
    )
    write_private(pidfile, json.dumps(asdict(record)))
    return record


def read_pidfile(pidfile: Path) -> PidRecord | None:
    try:
        data = json.loads(pidfile.read_text())
        return PidRecord(
            int(data["pid"]),
            int(data["start_ticks"]),
            list(data["command"]),
            float(data["started_at"]),
            {str(k): str(v) for k, v in dict(data.get("config") or {}).items()},
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def is_ours_and_alive(record: PidRecord) -> bool:
    """True while the recorded process still runs and is the very one we started."""
    ticks = _start_ticks(record.pid)
    return ticks is not None and ticks == record.start_ticks and not _is_zombie(record.pid)


def exit_code(record: PidRecord) -> int | None:
    """How a process this command started ended; None while it runs (or when not our child)."""
    popen = _CHILDREN.get(record.pid)
    return popen.poll() if popen is not None else None


def stop_group(record: PidRecord, grace_s: float = 10.0) -> bool:
    """SIGTERM the process group, SIGKILL it after `grace_s`; True if it was running."""
    if not is_ours_and_alive(record):
        _reap(record.pid)  # a child of ours that already exited: collect it
        return False
    pgid = record.pid  # start_new_session made the process the leader of its own group
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        _reap(record.pid)
        if not is_ours_and_alive(record) and not _group_alive(pgid):
            return True
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    _reap(record.pid, wait_s=5.0)
    return True


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a group made only of zombies is gone for our purposes
    return any(
        _pgid_of(int(p.name)) == pgid and not _is_zombie(int(p.name))
        for p in Path("/proc").iterdir()
        if p.name.isdigit()
    )


def _pgid_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except (ProcessLookupError, PermissionError):
        return None


def _reap(pid: int, wait_s: float = 0.0) -> None:
    """Collect the exit status when the process is our own child (started in this same command)."""
    popen = _CHILDREN.get(pid)
    if popen is None:
        return
    with contextlib.suppress(subprocess.TimeoutExpired):
        popen.wait(wait_s)
    if popen.returncode is not None:
        del _CHILDREN[pid]
