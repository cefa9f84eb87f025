"""The installed `openmono` run as a child process, as a user runs it, killed whole on a hang."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

OPENMONO = str(Path(sys.executable).parent / "openmono")


@dataclass
class CliResult:
    code: int
    out: str
    err: str


def run_openmono(
    args: list[str],
    env: dict[str, str],
    cwd: Path,
    stdin: str | None = None,
    timeout: float = 120,
) -> CliResult:
    """`openmono ARGS` in `cwd` with exactly `env`; a run past `timeout` is killed (its whole
    process group) and fails the test with what it printed."""
    proc = subprocess.Popen(
        [OPENMONO, *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"openmono {args} timed out\n{out}\n{err}") from None
    return CliResult(proc.returncode, out, err)
