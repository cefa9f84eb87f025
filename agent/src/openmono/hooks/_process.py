"""Running one hook command: a shell in its own process group, JSON on stdin, a hard timeout.

The whole group is killed on timeout or cancellation, so a hook that forks (`sleep 100 &`) leaves
nothing behind. Output is capped; a hook is a short script, not a data pipe.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmono_contracts.userenv import user_environment

OUTPUT_CAP = 64 * 1024


@dataclass(frozen=True)
class HookRun:
    """What one hook did; `failure` says why it did not run to a normal exit (None when it did)."""

    command: str
    exit_code: int | None
    stdout: str
    stderr: str
    failure: str | None = None

    @property
    def blocked(self) -> bool:
        return self.exit_code == 2


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


async def run_hook(
    command: str,
    payload: dict[str, Any],
    *,
    timeout_s: float,
    cwd: Path,
    env: dict[str, str] | None = None,
) -> HookRun:
    """Run `command` with `payload` as JSON on stdin; never raises for a failing hook."""
    data = json.dumps(payload, ensure_ascii=False).encode()
    try:
        proc = await asyncio.create_subprocess_shell(
            command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            # the user's environment, never OpenMono's own interpreter (a hook runs their tools)
            env={**user_environment(), **(env or {})},
            start_new_session=True,
        )
    except OSError as exc:
        return HookRun(command, None, "", "", failure=f"could not start: {exc}")
    try:
        out, err = await asyncio.wait_for(proc.communicate(data), timeout_s)
    except TimeoutError:
        _kill_group(proc)
        await proc.wait()
        return HookRun(command, None, "", "", failure=f"timed out after {timeout_s:g} s (killed)")
    except asyncio.CancelledError:
        _kill_group(proc)
        await proc.wait()
        raise
    finally:
        # The shell exited, but a child it left in the group may still run: end it too.
        _kill_group(proc)
    return HookRun(
        command,
        proc.returncode,
        out[:OUTPUT_CAP].decode(errors="replace"),
        err[:OUTPUT_CAP].decode(errors="replace"),
    )
