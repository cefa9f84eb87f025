"""Denials no rule, flag or answer can lift: protected system paths and destructive commands."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from openmono_contracts.toolfacts import ToolFacts

from openmono.permissions._bash import dangerous_reason, redirect_targets
from openmono.permissions._subjects import call_paths, resolve_path

_SYSTEM_DIRS = ("/etc", "/usr", "/bin", "/sbin", "/boot", "/lib", "/lib32", "/lib64", "/proc",
                "/sys", "/dev", "/var/lib", "/var/log")  # fmt: skip
_HOME_SECRETS = (".ssh", ".gnupg", ".aws", ".kube", ".docker", ".netrc", ".config/gcloud")


def protected_roots() -> tuple[Path, ...]:
    """Folders a tool may never write into."""
    home = Path.home()
    return tuple(Path(d) for d in _SYSTEM_DIRS) + tuple(home / s for s in _HOME_SECRETS)


def is_protected(path: Path) -> bool:
    """Is `path` (already resolved) one of the protected folders or inside one?"""
    return any(path == root or root in path.parents for root in protected_roots())


def builtin_denial(facts: ToolFacts, args: Mapping[str, Any], workspace: Path) -> str | None:
    """Why this call is refused outright, or None."""
    if facts.writes:
        for path in call_paths(facts, args, workspace):
            if is_protected(path):
                return f"writing to {path} is never allowed (protected system or secret path)"
    if facts.shell_param:
        command = str(args.get(facts.shell_param, ""))
        reason = dangerous_reason(command)
        if reason:
            return f"this command is never allowed: {reason}"
        for target in redirect_targets(command):
            if target == "/dev/null":
                continue
            path = resolve_path(target, workspace)
            if is_protected(path):
                return f"redirecting output into {path} is never allowed (protected path)"
    return None
