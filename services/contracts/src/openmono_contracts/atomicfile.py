"""Replace a file atomically: write a temp file in the same folder, fsync it, rename it over.

Used wherever a half-written file would hurt: the worker's FileWrite/FileEdit/ApplyPatch and
artifacts, the agent's settings and snapshot manifests, the native stack's `.env`. A crash leaves
either the old file or the new one, never a torn one, and never a stray temp file after an error.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["atomic_write"]


def _default_mode() -> int:
    # The mode a plain `open()` would give a new file; os.umask can only be read by setting it.
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write(path: Path, content: str, *, mode: int | None = None) -> bool:
    """Write `content` to `path` as UTF-8 (surrogate escapes go back to the bytes they stand for).

    `mode`: the new file's permission bits; None keeps the old file's mode (or the umask's default
    for a new file). Parent directories are created. Returns True if the file existed before.
    """
    existed = path.exists()
    if mode is None:
        mode = stat.S_IMODE(path.stat().st_mode) if existed else _default_mode()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp_path = Path(tmp)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="") as fh:
            fh.write(content)
            fh.flush()
            os.fsync(fh.fileno())
        tmp_path.chmod(mode)
        tmp_path.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp_path.unlink()
        raise
    return existed
