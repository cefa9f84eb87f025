"""The data dir is its owner's alone: folders 0700, files 0600 (issue 36, finding 11).

Sessions, artifacts, the stack's logs, the key service's usage records and the scrape service's
logs hold tool outputs, prompts and URLs, so no other local user may read them. Every process that
writes under the data dir (the agent, the tool worker, the native stack and its services, in compose
the containers on their volumes) creates its folders and files through these helpers, so the mode
is set where the file is born instead of fixed up afterwards. A process the stack starts runs with
`PRIVATE_UMASK`, so what it writes on its own (Caddy's storage, Redis, npm's installs) follows too.

An older version left a 0755 data dir of 0644 files: `tighten` takes the group and other bits off
everything under it once, when the data dir itself is found open (`ensure_private_root`), and
`exposed` lists what is still readable by others (`openmono doctor`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO, Literal, TextIO, overload

from openmono_contracts.atomicfile import atomic_write

__all__ = [
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "PRIVATE_UMASK",
    "ensure_private_root",
    "exposed",
    "open_private",
    "private_dir",
    "tighten",
    "write_private",
]

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
# the umask of the processes whose every file lands in the data dir (the native stack's services)
PRIVATE_UMASK = 0o077
_OTHERS = 0o077


def _close_off(path: Path, st: os.stat_result) -> None:
    """Take the group and other bits off a path we own (a folder keeps its owner's x)."""
    mode = stat.S_IMODE(st.st_mode)
    if mode & _OTHERS and st.st_uid == os.geteuid():
        path.chmod(mode & ~_OTHERS)


def private_dir(path: Path) -> Path:
    """`path` as a folder that only its owner can enter: created (with any missing parents) 0700,
    an existing one of ours tightened to 0700. Returns `path`."""
    missing: list[Path] = []
    here = path
    while not here.exists():
        missing.append(here)
        if here.parent == here:
            break
        here = here.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:  # another process made it meanwhile, maybe wider
            _close_off(folder, folder.stat())
    st = path.stat()
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(f"{path} is not a folder")
    if stat.S_IMODE(st.st_mode) != PRIVATE_DIR_MODE and st.st_uid == os.geteuid():
        path.chmod(PRIVATE_DIR_MODE)
    return path


def write_private(path: Path, text: str) -> None:
    """Replace `path` atomically, 0600, in a private folder (created when missing)."""
    private_dir(path.parent)
    atomic_write(path, text, mode=PRIVATE_FILE_MODE)


def _flags(mode: str) -> int:
    if mode.startswith("a"):
        return os.O_WRONLY | os.O_APPEND | os.O_CREAT
    if mode.startswith("w"):
        return os.O_WRONLY | os.O_TRUNC | os.O_CREAT
    raise ValueError(f"open_private: mode {mode!r} (only 'a', 'ab', 'w', 'wb')")


@overload
def open_private(path: Path, mode: Literal["a", "w"] = "a", **kwargs: Any) -> TextIO: ...
@overload
def open_private(path: Path, mode: Literal["ab", "wb"], **kwargs: Any) -> BinaryIO: ...
def open_private(path: Path, mode: str = "a", **kwargs: Any) -> IO[Any]:
    """Open `path` for writing (append or truncate), created 0600 in a private folder; a file an
    older version left 0644 is tightened to 0600 on the way."""
    private_dir(path.parent)
    fd = os.open(path, _flags(mode) | os.O_CLOEXEC, PRIVATE_FILE_MODE)
    try:
        st = os.fstat(fd)
        if stat.S_IMODE(st.st_mode) & _OTHERS and st.st_uid == os.geteuid():
            os.fchmod(fd, stat.S_IMODE(st.st_mode) & ~_OTHERS)
        return os.fdopen(fd, mode, **kwargs)
    except BaseException:
        os.close(fd)
        raise


def _walk(root: Path) -> Iterator[tuple[Path, os.stat_result]]:
    """Every path under `root` (itself included), never following a symlink."""
    try:
        st = root.lstat()
    except OSError:
        return
    yield root, st
    if not stat.S_ISDIR(st.st_mode):
        return
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in (*dirnames, *filenames):
            path = Path(dirpath, name)
            with contextlib.suppress(OSError):
                yield path, path.lstat()


def tighten(root: Path) -> int:
    """Take the group and other bits off everything of ours under `root`; how many changed.
    Symlinks are skipped (their own mode means nothing, and their targets may be elsewhere)."""
    changed = 0
    for path, st in _walk(root):
        if stat.S_ISLNK(st.st_mode) or not stat.S_IMODE(st.st_mode) & _OTHERS:
            continue
        if st.st_uid != os.geteuid():
            continue
        with contextlib.suppress(OSError):
            _close_off(path, st)
            changed += 1
    return changed


def ensure_private_root(data_dir: Path) -> int:
    """The data dir, created 0700; one an older version left open is tightened whole (once: a
    0700 data dir is not walked again). Returns how many paths were tightened."""
    try:
        st = data_dir.stat()
    except FileNotFoundError:
        private_dir(data_dir)
        return 0
    if not stat.S_IMODE(st.st_mode) & _OTHERS:
        return 0
    return tighten(data_dir)


def exposed(root: Path, limit: int = 20) -> tuple[list[Path], int]:
    """Paths under `root` that others can read, write or enter: up to `limit` of them, and how
    many there are in all."""
    found: list[Path] = []
    total = 0
    for path, st in _walk(root):
        if stat.S_ISLNK(st.st_mode) or not stat.S_IMODE(st.st_mode) & _OTHERS:
            continue
        total += 1
        if len(found) < limit:
            found.append(path)
    return found, total
