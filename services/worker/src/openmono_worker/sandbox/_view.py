"""What a sandboxed command sees: the allow-list of hierarchies, with the hidden paths carved out.

Landlock only allows, so the view is built from what is offered, never from what is refused:

- read (and execute): the system's program and library trees, `/etc`, `/proc`, `/sys`, the
  folders on `PATH`, the workspace, and what `WORKER_SANDBOX_READ` adds;
- read and write: a few devices (`/dev/null`, `/dev/zero`, `/dev/full`), the call's private
  temporary folder, and under `workspace_write` the workspace;
- nothing else: home, `/tmp`, `/run` (sockets), `/var`, other devices (`/dev/sda`), the data dir.

A hidden path that exists inside an offered tree (`compose/.env` of a workspace that is the
checkout, `/etc/shadow`, the data dir inside the workspace) is carved out: the tree is offered as
its entries, recursively along the way to the hidden path. Landlock rights on a folder hold for
everything beneath it, so a folder on that way gets nothing but the right to list its entries
(names show, contents do not): under `workspace_write` no new entry can be made directly in it
(in the checkout itself: none at the workspace root), but everything else beneath is writable.
The view is stale once one of those folders changes (or the folder that would hold a hidden path
not there yet): the call that notices (by mtime) builds it again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from openmono_worker.sandbox._syscalls import (
    FILE_RIGHTS,
    FS_EXECUTE,
    FS_IOCTL_DEV,
    FS_READ_DIR,
    FS_READ_FILE,
    FS_TRUNCATE,
    FS_WRITE_FILE,
)

SYSTEM_TREES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
                "/nix/store", "/proc", "/sys")  # fmt: skip
DEVICES_RW = ("/dev/null", "/dev/zero", "/dev/full")
DEVICES_R = ("/dev/urandom", "/dev/random")

READ = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR


@dataclass(frozen=True)
class Rule:
    path: str
    access: int
    is_dir: bool = True


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def carve(
    root: str, hidden: Sequence[str], access: int, *, is_dir: bool = True, split: list[str]
) -> list[Rule]:
    """`access` beneath `root`, except beneath the `hidden` paths (see the module docstring).

    `root` and `hidden` are resolved paths (strings: this runs for every entry on the way).
    Symlinks met on the way get no rule: a rule follows them to their target, which is in the
    view only if it is offered on its own. The folders offered as their entries are added to
    `split`."""
    inner = [h for h in hidden if _inside(h, root)]
    if not inner:
        return [Rule(root, access if is_dir else access & FILE_RIGHTS, is_dir)]
    if root in inner or not is_dir:
        return []
    rules = [Rule(root, access & FS_READ_DIR)]
    split.append(root)
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return rules
    for entry in entries:
        if not entry.is_symlink():
            kind = entry.is_dir(follow_symlinks=False)
            rules += carve(entry.path, inner, access, is_dir=kind, split=split)
    return rules


def _nearest(path: str) -> str:
    """`path`'s nearest existing ancestor (a hidden path not there yet appears in it)."""
    while not os.path.lexists(path) and path != "/":
        path = os.path.dirname(path)  # noqa: PTH120 -- strings, as above
    return path


def _real(paths: Iterable[str | Path]) -> list[str]:
    out: list[str] = []
    for raw in paths:
        path = Path(raw)
        if not path.is_absolute() or not path.exists():
            continue
        real = str(path.resolve())
        if real not in out:
            out.append(real)
    return out


def view_rules(
    *,
    workspace: Path,
    writable_workspace: bool,
    private_tmp: Path,
    hidden: Sequence[Path],
    path_dirs: Iterable[str],
    extra_read: Iterable[Path],
    all_fs: int,
) -> tuple[list[Rule], list[str]]:
    """Every Landlock rule of one call's view, and the folders it goes stale with."""
    rules: list[Rule] = []
    split: list[str] = []
    trees = [(t, READ) for t in _real([*SYSTEM_TREES, *path_dirs, *extra_read])]
    trees.append((str(workspace.resolve()), all_fs if writable_workspace else READ))
    wanted = [str(h) for h in hidden]
    present = [h for h in wanted if os.path.lexists(h)]
    for tree, access in trees:
        rules += carve(tree, present, access, is_dir=Path(tree).is_dir(), split=split)
        # where a hidden path would appear inside this tree: watched, so its arrival is noticed
        split += [_nearest(h) for h in wanted if h not in present and _inside(h, tree)]
    rules.append(Rule(str(private_tmp), all_fs))
    device_file = READ & FILE_RIGHTS
    for device in DEVICES_RW:
        rules.append(Rule(device, device_file | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV, False))
    for device in DEVICES_R:
        rules.append(Rule(device, device_file, False))
    return rules, split
