"""The OS sandbox of shell commands (Linux: Landlock + seccomp + no capabilities), and rlimits.

`ToolRequest.sandbox` asks for it (docs/architecture.md §7); the Bash tool builds one per call
(`prepare`), and the spawn server (`spawn`, `_spawnd`) forks the command and enters it before
exec. What a sandboxed command sees is `_view`'s allow-list; what it may do beyond that is in
docs/security.md.

    support()     what this kernel offers (Landlock ABI, the seccomp filter), and why not
    prepare()     one call's sandbox: ruleset, private folder, environment
    Confinement   what the child enters before exec: rlimits, the subreaper flag, the sandbox
    spawn()       start a command confined (through this process's spawn server)
    Limits        the rlimits (processes, file size, CPU time)
"""

from openmono_worker.sandbox._call import SandboxedCall, Where, prepare
from openmono_worker.sandbox._confine import Confinement, Limits
from openmono_worker.sandbox._errors import SandboxUnavailable
from openmono_worker.sandbox._spawner import SpawnFailed, spawn
from openmono_worker.sandbox._support import MIN_ABI, Support, support

__all__ = [
    "MIN_ABI",
    "Confinement",
    "Limits",
    "SandboxUnavailable",
    "SandboxedCall",
    "SpawnFailed",
    "Support",
    "Where",
    "prepare",
    "spawn",
    "support",
]
