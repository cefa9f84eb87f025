"""Where the Python indexes live: one per workspace in the process, and a copy on disk.

The in-process index answers warm queries; the disk copy (under the data dir) makes a new
process's first query cheap: it starts from the stored file facts and `refresh` rescans only the
files whose size, mtime and hash moved since, and resolves references again only where that is
needed. The copy is a pickle: it is written only by this module into our own data dir, it is
tagged with a hash of the scanner's and the index's source (changed code never reads an old
copy), and anything unreadable is ignored (the index is rebuilt).
"""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

from openmono_worker.cachefile import cache_path, load_state, store_state
from openmono_worker.codeintel import _pyindex, _pyscan
from openmono_worker.codeintel._pyindex import PyIndex

_MAX_INDEXES = 8
_indexes: dict[Path, PyIndex] = {}
_lock = threading.Lock()
_SCHEMA = hashlib.blake2b(
    b"".join(Path(m.__file__ or "").read_bytes() for m in (_pyscan, _pyindex))
    + Path(__file__).read_bytes(),
    digest_size=8,
).hexdigest()


def _load(index: PyIndex, path: Path) -> None:
    state = load_state(path, _SCHEMA)
    if state is not None:
        index.adopt(state)


_SAVE_EVERY_S = 30.0
_saved_at: dict[Path, float] = {}


def save_index(index: PyIndex, cache_dir: Path, *, force: bool = False) -> None:
    """Write the index's file facts to disk (atomically), at most every `_SAVE_EVERY_S`: a copy
    that is a little behind costs the next process a rescan of the files edited since, nothing
    more. Failures only cost the next cold start."""
    now = time.monotonic()
    last = _saved_at.get(index.workspace)
    target = cache_path(cache_dir, index.workspace)
    if not force and last is not None and now - last < _SAVE_EVERY_S and target.exists():
        return
    _saved_at[index.workspace] = now
    store_state(target, _SCHEMA, index.state())


def index_for(workspace: Path, cache_dir: Path | None = None) -> PyIndex:
    """The process's index of `workspace` (callers hold `index.lock` and `refresh()` it)."""
    with _lock:
        index = _indexes.get(workspace)
        if index is None:
            if len(_indexes) >= _MAX_INDEXES:
                _indexes.pop(next(iter(_indexes)))
            index = PyIndex(workspace)
            if cache_dir is not None:
                _load(index, cache_path(cache_dir, workspace))
            _indexes[workspace] = index
    return index


def forget_indexes() -> None:
    """Drop the in-process indexes (the disk copies stay): the next query starts cold."""
    with _lock:
        _indexes.clear()
