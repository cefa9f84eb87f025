"""What a command is confined by: rlimits, the subreaper flag and, sandboxed, the sandbox.

A `Confinement` is decided in the tool's process (the ruleset fd, the seccomp program, the limits
clamped to what this process may set) and handed, as a JSON `spec()` and the ruleset fd, to the
process that forks the command (`_spawnd`), whose child enters it before exec, in this order:

1. rlimits (processes, file size, CPU time): soft and hard (CPU: hard one second later), so a
   command cannot raise them again (except with CAP_SYS_RESOURCE, which the sandbox drops);
2. `PR_SET_CHILD_SUBREAPER` (kept across exec): everything the command starts stays beneath the
   child, even after `setsid` and a double fork, so the end of the call can find and kill it;
3. sandboxed only: `no_new_privs` (no setuid gains, and Landlock and seccomp without privilege),
   every capability dropped from the bounding set (a root worker's command cannot set the clock,
   the hostname, or read past file modes), the seccomp filter, then the Landlock domain.
"""

from __future__ import annotations

import contextlib
import os
import resource
from dataclasses import dataclass, field
from typing import Any

_CAP_LAST = "/proc/sys/kernel/cap_last_cap"


@dataclass(frozen=True)
class Limits:
    """Per-process limits of a tool command; 0 means "leave it as it is"."""

    cpu_s: int = 0
    fsize_bytes: int = 0
    nproc: int = 0

    def clamped(self) -> list[tuple[int, int, int]]:
        """(resource, soft, hard), never above the current hard limit (only root may raise it)."""
        out: list[tuple[int, int, int]] = []
        for res, wanted in (
            (resource.RLIMIT_CPU, self.cpu_s),
            (resource.RLIMIT_FSIZE, self.fsize_bytes),
            (resource.RLIMIT_NPROC, self.nproc),
        ):
            if wanted <= 0:
                continue
            _, hard = resource.getrlimit(res)
            value = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
            # CPU time: SIGXCPU at the soft limit (a command may catch it and stop cleanly),
            # SIGKILL a second later at the hard one.
            top = value + 1 if res == resource.RLIMIT_CPU else value
            if hard != resource.RLIM_INFINITY:
                top = min(top, hard)
            out.append((res, value, top))
        return out


def last_cap() -> int:
    """The highest capability number this kernel knows."""
    try:
        with open(_CAP_LAST) as fh:  # noqa: PTH123
            return int(fh.read().strip())
    except (OSError, ValueError):
        return 63


@dataclass
class Confinement:
    """How one command is confined (see the module docstring); `close()` after the spawn."""

    limits: Limits = field(default_factory=Limits)
    subreaper: bool = True
    # Sandboxed: the Landlock ruleset fd (this call's own copy) and the seccomp program.
    ruleset_fd: int | None = None
    seccomp: bytes | None = None

    @property
    def sandboxed(self) -> bool:
        return self.ruleset_fd is not None

    def spec(self) -> dict[str, Any]:
        """What the forking process needs besides the ruleset fd (JSON)."""
        sandbox = None
        if self.ruleset_fd is not None:
            sandbox = {"seccomp": (self.seccomp or b"").hex(), "last_cap": last_cap()}
        return {
            "rlimits": self.limits.clamped(),
            "subreaper": self.subreaper,
            "sandbox": sandbox,
        }

    def close(self) -> None:
        if self.ruleset_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.ruleset_fd)
            self.ruleset_fd = None
