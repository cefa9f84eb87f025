"""One sandboxed call: its view as a Landlock ruleset, its private folder, its environment.

Building a view lists every folder on the way to a hidden path (`/etc`, the workspace root, ...)
and adds a rule per entry: ~10 ms. So the ruleset is kept per (policy, workspace, PATH) in this
process and used again while none of the split folders changed (their mtimes are the key); each
call gets a `dup` of it, so a rebuild never closes a ruleset a spawn is about to enter.

The private folders of this process's calls live under one root that the view offers writable
(`<tmp>/openmono-sandbox-<pid>-*`), one subfolder per call, removed when the call ends; the root
goes when the process exits. Calls running at the same time in one process can see each other's
folder (they are the same agent's calls).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from openmono_contracts.sandbox import SandboxPolicy, hidden_paths

from openmono_worker.sandbox import _seccomp
from openmono_worker.sandbox import _syscalls as sc
from openmono_worker.sandbox._confine import Confinement, Limits
from openmono_worker.sandbox._env import sandbox_env
from openmono_worker.sandbox._errors import SandboxUnavailable
from openmono_worker.sandbox._support import support
from openmono_worker.sandbox._view import view_rules

_MAX_KEPT = 16


@dataclass(frozen=True)
class Where:
    """What the view is built from besides the workspace (the worker's settings fill it)."""

    data_dir: Path
    env_file: Path | None = None
    extra_read: Sequence[Path] = ()
    extra_hidden: Sequence[Path] = ()


@dataclass
class SandboxedCall:
    """A call's sandbox, ready to spawn with: `confinement.in_child` as the preexec function."""

    policy: SandboxPolicy
    confinement: Confinement
    tmp: Path

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        return sandbox_env(self.policy, base, self.tmp)

    def close(self) -> None:
        """After the call: the ruleset copy closed, the private folder removed."""
        self.confinement.close()
        try:
            self.tmp.rmdir()
        except OSError:
            shutil.rmtree(self.tmp, ignore_errors=True)


@dataclass
class _Kept:
    signature: tuple[tuple[str, int], ...]
    fd: int


_lock = threading.Lock()
_kept: dict[tuple[object, ...], _Kept] = {}
_roots: dict[int, Path] = {}  # pid -> this process's root of private folders


def _tmp_root() -> Path:
    pid = os.getpid()
    root = _roots.get(pid)
    if root is None:
        _kept.clear()  # a forked process: the parent's rulesets name the parent's root
        root = Path(tempfile.mkdtemp(prefix=f"openmono-sandbox-{pid}-")).resolve()
        _roots[pid] = root
        atexit.register(shutil.rmtree, root, True)
    return root


def _signature(split: Sequence[str]) -> tuple[tuple[str, int], ...]:
    out: list[tuple[str, int]] = []
    for folder in split:
        try:
            out.append((folder, Path(folder).stat().st_mtime_ns))
        except OSError:
            out.append((folder, -1))
    return tuple(out)


def _path_dirs(path_value: str, home: Path) -> list[str]:
    """PATH's folders, leaving out any that would offer home (or `/`) as a whole."""
    out: list[str] = []
    for entry in path_value.split(":"):
        if not entry.startswith("/"):
            continue
        folder = Path(entry)
        if folder == home or folder in home.parents:
            continue
        out.append(entry)
    return out


def _build(
    policy: SandboxPolicy, workspace: Path, where: Where, path_value: str, root: Path
) -> _Kept:
    found = support()
    home = Path.home().resolve()
    hidden = hidden_paths(
        workspace,
        data_dir=where.data_dir,
        home=home,
        env_file=where.env_file,
        extra=where.extra_hidden,
    )
    all_fs = sc.fs_rights(found.abi)
    rules, split = view_rules(
        workspace=workspace,
        writable_workspace=policy == "workspace_write",
        private_tmp=root,
        hidden=hidden,
        path_dirs=_path_dirs(path_value, home),
        extra_read=where.extra_read,
        all_fs=all_fs,
    )
    net = sc.NET_BIND_TCP | sc.NET_CONNECT_TCP if found.abi >= 4 else 0
    scoped = sc.SCOPE_ABSTRACT_UNIX_SOCKET | sc.SCOPE_SIGNAL if found.abi >= 6 else 0
    fd = sc.create_ruleset(all_fs, net, scoped, found.abi)
    try:
        for rule in rules:
            sc.add_path_rule(fd, rule.path, rule.access & all_fs)
    except OSError:
        sc.close_fd(fd)
        raise
    return _Kept(_signature(split), fd)


def _ruleset(policy: SandboxPolicy, workspace: Path, where: Where, path_value: str) -> int:
    """A dup of the kept ruleset for this call (built again when its view went stale)."""
    with _lock:
        root = _tmp_root()
        key = (policy, str(workspace), path_value, where)
        kept = _kept.get(key)
        if kept is not None and _signature([f for f, _ in kept.signature]) != kept.signature:
            sc.close_fd(kept.fd)
            del _kept[key]
            kept = None
        if kept is None:
            if len(_kept) >= _MAX_KEPT:
                for old in _kept.values():
                    sc.close_fd(old.fd)
                _kept.clear()
            kept = _kept[key] = _build(policy, workspace, where, path_value, root)
        return os.dup(kept.fd)


def prepare(
    policy: SandboxPolicy,
    workspace: Path,
    where: Where,
    *,
    limits: Limits,
    path_value: str,
    call_id: str = "call",
) -> SandboxedCall:
    """The sandbox of one call under `policy`; `SandboxUnavailable` where none can be made."""
    found = support()
    if not found.available:
        raise SandboxUnavailable(found.reason)
    try:
        fd = _ruleset(policy, workspace.resolve(), where, path_value)
        tmp = Path(tempfile.mkdtemp(prefix=f"{call_id[:40]}-", dir=_tmp_root()))
    except OSError as exc:
        raise SandboxUnavailable(f"the sandbox could not be built: {exc}") from exc
    confinement = Confinement(limits, ruleset_fd=fd, seccomp=_seccomp.program())
    return SandboxedCall(policy, confinement, tmp)
