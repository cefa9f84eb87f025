"""Where the graphs live: one per workspace in the process, and a copy on disk in the data dir.

The disk copy holds every file's stamp and content hash and the tags of each content hash, so a
new process (a new session, a replaced pool process) re-reads only what changed since and parses
only content it has never seen. It is a pickle written only by this module into our own data
dir, tagged with a hash of the extraction code and the queries (changed code never reads an old
copy); anything unreadable is ignored and the graph is built again.
"""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

from openmono_worker.cachefile import cache_path, load_state, store_state
from openmono_worker.codegraph import _extract, _langs, _syntax, _tags
from openmono_worker.codegraph._graph import CodeGraph, Entry
from openmono_worker.codegraph._map import Mapper

_MAX_GRAPHS = 8
_SAVE_EVERY_S = 30.0
_graphs: dict[Path, tuple[CodeGraph, Mapper]] = {}
_saved_at: dict[Path, float] = {}
_lock = threading.Lock()


def _schema() -> str:
    h = hashlib.blake2b(digest_size=8)
    for module in (_extract, _langs, _syntax, _tags):
        h.update(Path(module.__file__ or "").read_bytes())
    for query in sorted((Path(_langs.__file__ or "").parent / "queries").glob("*.scm")):
        h.update(query.read_bytes())
    return h.hexdigest()


_SCHEMA = _schema()


def _load(graph: CodeGraph, path: Path) -> None:
    state = load_state(path, _SCHEMA)
    if not isinstance(state, dict):
        return
    tags = state["tags"]
    graph.by_digest = dict(tags)
    graph.entries = {
        rel: Entry(mtime, size, digest, tags[digest])
        for rel, (mtime, size, digest) in state["entries"].items()
        if digest in tags
    }


def save_graph(graph: CodeGraph, cache_dir: Path, *, force: bool = False) -> None:
    """Write the graph's file table (atomically), at most every `_SAVE_EVERY_S` unless forced:
    a copy a little behind costs the next process a re-read of the files changed since."""
    now = time.monotonic()
    target = cache_path(cache_dir, graph.workspace)
    last = _saved_at.get(graph.workspace)
    if not force and last is not None and now - last < _SAVE_EVERY_S and target.exists():
        return
    _saved_at[graph.workspace] = now
    used = {e.digest for e in graph.entries.values()}
    graph.by_digest = {d: t for d, t in graph.by_digest.items() if d in used}  # forget the rest
    state = {
        "entries": {r: (e.mtime_ns, e.size, e.digest) for r, e in graph.entries.items()},
        "tags": graph.by_digest,
    }
    store_state(target, _SCHEMA, state)


def graph_for(workspace: Path, cache_dir: Path | None = None) -> tuple[CodeGraph, Mapper]:
    """The process's graph of `workspace` and its map builder (callers hold `graph.lock` and
    `refresh()` it)."""
    with _lock:
        found = _graphs.get(workspace)
        if found is None:
            if len(_graphs) >= _MAX_GRAPHS:
                _graphs.pop(next(iter(_graphs)))
            graph = CodeGraph(workspace)
            if cache_dir is not None:
                _load(graph, cache_path(cache_dir, workspace))
            found = _graphs[workspace] = (graph, Mapper(graph))
    return found


def forget_graphs() -> None:
    """Drop the in-process graphs (the disk copies stay): the next use starts from disk."""
    with _lock:
        _graphs.clear()
        _saved_at.clear()
