"""Background commands of this process (Bash `background: true`): run under a keeper, waited for.

`start_job` runs the command under `_keeper` (its own session; the keeper's pid is the job's pid
and process group) with its output appended to the log, and returns at once. One daemon thread per
job waits for the keeper, so a finished job never lingers as a zombie of this process, however long
it is before the next call. The keeper writes the job's exit status itself (a last log line and the
status file); only when the keeper could not (it was SIGKILLed with its group) does the waiting
thread write the status file, from the keeper's own exit.

This process may end before its jobs do (a recycled pool process): the keepers then belong to the
worker's main process (`openmono_worker._reaper`), and still keep their status.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmono_contracts.privatefs import open_private, private_dir

from openmono_worker.sandbox import Confinement
from openmono_worker.tools import _keeper

_KEEPER = Path(_keeper.__file__)
_KEEPER_ARG = os.fsencode(_KEEPER)


@dataclass(frozen=True)
class Job:
    """A started background command: its pid (= process group), log and status file."""

    pid: int
    log: Path
    status: Path


def is_job_keeper(pid: int) -> bool:
    """Whether process `pid` is the keeper of a background job (its command line says so)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return _KEEPER_ARG in argv


def status_path(log: Path) -> Path:
    """Where the job logging to `log` keeps its exit status."""
    return log.with_name(f"{log.stem}.status.json")


def read_status(path: Path) -> dict[str, Any] | None:
    """The status a job left (`pid`, `exit_code`, `signal`, `ended_at`); None while it runs."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def start_job(
    argv: Sequence[str],
    *,
    cwd: Path,
    log: Path,
    env: Mapping[str, str] | None = None,
    confinement: Confinement | None = None,
) -> Job:
    """Start `argv` detached under a keeper, output appended to `log`; do not wait.
    `confinement`: what the command (not the keeper) enters before exec."""
    private_dir(log.parent)
    status = status_path(log)
    status.unlink(missing_ok=True)  # a call id run again: the old status is not this job's
    keeper = [sys.executable, "-I", "-S", str(_KEEPER)]
    keep: tuple[int, ...] = ()
    if confinement is not None:
        spec = confinement.spec()
        if confinement.ruleset_fd is not None:
            spec["ruleset_fd"] = confinement.ruleset_fd
            keep = (confinement.ruleset_fd,)
        keeper += ["--confine", json.dumps(spec)]
    keeper += [str(log), str(status), *argv]
    with open_private(log, "ab") as fh:
        proc = subprocess.Popen(
            keeper,
            cwd=cwd,
            env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL,
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=keep,
        )
    waiter = threading.Thread(
        target=_wait, args=(proc, status), name=f"bash-job-{proc.pid}", daemon=True
    )
    waiter.start()
    return Job(proc.pid, log, status)


def _wait(proc: subprocess.Popen[bytes], status: Path) -> None:
    returncode = proc.wait()
    if not status.exists():
        # The keeper died before it could write (SIGKILL): its own end is the best we know.
        _keeper.write_status(status, proc.pid, returncode)
