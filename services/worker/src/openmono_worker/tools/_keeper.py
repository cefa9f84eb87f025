"""The keeper of one background command (Bash `background: true`): run it, wait, keep its status.

Started by `_jobs.start_job` as `python -I -S _keeper.py [--confine SPEC] LOG STATUS_FILE
COMMAND...`, as the leader of a session of its own, with stdout and stderr appended to LOG.
SPEC is a confinement (`openmono_worker.sandbox.Confinement.spec()`, JSON, with `ruleset_fd` when
sandboxed: an fd this process inherited): the command enters it before exec, as foreground
commands do (`sandbox._spawnd.preparer`), while the keeper itself stays outside it, so it can
still write the status. The command runs as its
child in the same process group, so `kill -- -PID` still reaches everything; a signal sent to the
keeper's pid alone (TERM, INT, HUP, QUIT, USR1, USR2) is passed on to the command. When the
command ends the keeper writes how: a last line `[exit code N]` (or `[killed by signal N]`) in the
log and STATUS_FILE (JSON: `pid`, `exit_code`, `signal`, `ended_at`), then ends the same way.

Why a process of its own: the process that started the job may be gone long before the job ends (a
pool process is recycled after `max_tasks_per_child` calls, a worker restarts), and the exit status
must still be there for whoever asks. The keeper itself is waited for by its parent (a thread of
`_jobs`) or, once that parent is gone, by the worker's main process (a subreaper, `_reaper`).

Standard library only: it runs with `-I -S` and starts in a few tens of milliseconds.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

_SANDBOX = Path(__file__).resolve().parents[1] / "sandbox"

PASSED_ON = (
    signal.SIGTERM,
    signal.SIGINT,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)


def describe(returncode: int) -> str:
    """`[exit code N]` or `[killed by signal N]` (a negative code is death by signal)."""
    if returncode < 0:
        return f"[killed by signal {-returncode}]"
    return f"[exit code {returncode}]"


def write_status(path: Path, pid: int, returncode: int) -> None:
    """STATUS_FILE, whole or not at all (written beside it, then renamed)."""
    status = {
        "pid": pid,
        "exit_code": returncode if returncode >= 0 else None,
        "signal": -returncode if returncode < 0 else None,
        "ended_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    # 0600 like everything in the data dir (this script runs without the package: no privatefs)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(json.dumps(status) + "\n")
    tmp.replace(path)


def _ends_a_line(log: Path) -> bool:
    try:
        with log.open("rb") as fh:
            fh.seek(-1, os.SEEK_END)
            return fh.read(1) == b"\n"
    except OSError:  # empty (or gone): nothing to end
        return True


def _preparer(spec: dict[str, Any]) -> Callable[[], None]:
    """The child's side of a confinement, from the spawn server's module (loaded by path: this
    process runs without the package on its path)."""
    sys.path.insert(0, str(_SANDBOX))
    found = importlib.util.spec_from_file_location("_spawnd", _SANDBOX / "_spawnd.py")
    assert found is not None and found.loader is not None
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    fd = spec.get("ruleset_fd")
    enter: Callable[[], None] = module.preparer(spec, None if fd is None else int(fd))
    return enter


def main(argv: list[str]) -> int:
    enter: Callable[[], None] | None = None
    keep: tuple[int, ...] = ()
    if argv[:1] == ["--confine"] and len(argv) > 1:
        spec = json.loads(argv[1])
        enter = _preparer(spec)
        keep = (int(spec["ruleset_fd"]),) if spec.get("ruleset_fd") is not None else ()
        argv = argv[2:]
    if len(argv) < 3:
        print("usage: _keeper.py [--confine SPEC] LOG STATUS_FILE COMMAND...", file=sys.stderr)
        return 2
    log, status_path, command = Path(argv[0]), Path(argv[1]), argv[2:]
    child_pid: list[int] = []

    def pass_on(signum: int, _frame: object) -> None:
        for pid in child_pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

    # Before the command starts, so no signal meant for it can end the keeper alone.
    for sig in PASSED_ON:
        signal.signal(sig, pass_on)
    child = subprocess.Popen(command, preexec_fn=enter, pass_fds=keep)
    child_pid.append(child.pid)
    returncode = child.wait()
    # stdout is LOG, opened for appending: the status goes last, on a line of its own.
    sys.stdout.write(("" if _ends_a_line(log) else "\n") + describe(returncode) + "\n")
    sys.stdout.flush()
    with contextlib.suppress(OSError):  # the waiting thread of `_jobs` writes it then
        write_status(status_path, os.getpid(), returncode)
    if returncode < 0:
        signal.signal(-returncode, signal.SIG_DFL)
        os.kill(os.getpid(), -returncode)
    return returncode if returncode >= 0 else 128 - returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
