"""Can this process sandbox a command? Landlock's ABI and the seccomp filter's architecture.

The sandbox needs Landlock ABI 3 or later (ABI 1 does not stop `truncate`, ABI 2 stops renames
across folders only when asked) and a machine the seccomp filter knows (x86_64, aarch64).
ABI 4 adds the TCP rules, ABI 6 the signal and abstract-socket scopes; each is used when present.
"""

from __future__ import annotations

import platform
import sys
from dataclasses import dataclass
from functools import cache

from openmono_worker.sandbox import _seccomp
from openmono_worker.sandbox._syscalls import landlock_abi

MIN_ABI = 3


@dataclass(frozen=True)
class Support:
    """What the kernel offers here; `reason` says why the sandbox is unavailable ("" if it is)."""

    abi: int
    seccomp: bool
    reason: str

    @property
    def available(self) -> bool:
        return not self.reason

    def describe(self) -> str:
        if not self.available:
            return f"unavailable: {self.reason}"
        extras = ["filesystem"]
        if self.abi >= 4:
            extras.append("TCP")
        if self.abi >= 6:
            extras.append("signals, abstract unix sockets")
        return f"Landlock ABI {self.abi} ({', '.join(extras)}) + seccomp (sockets, io_uring)"


@cache
def support() -> Support:
    """The sandbox's support in this process (asked of the kernel once)."""
    if not sys.platform.startswith("linux"):
        return Support(0, False, f"Landlock is Linux only (this is {sys.platform})")
    abi = landlock_abi()
    seccomp = _seccomp.supported()
    if abi == 0:
        reason = (
            "the kernel offers no Landlock (older than 5.13, or `lsm=` without landlock, or a "
            "seccomp profile that refuses its system calls)"
        )
    elif abi < MIN_ABI:
        reason = f"Landlock ABI {abi} is too old (the sandbox needs {MIN_ABI}: kernel 6.2+)"
    elif not seccomp:
        reason = f"the seccomp filter does not know this machine ({platform.machine()})"
    else:
        reason = ""
    return Support(abi, seccomp, reason)
