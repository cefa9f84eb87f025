"""Our repository map timed on one tree, the same protocol as `_aider_map.py`.

    python _our_map.py ROOT EDIT_FILE EDIT_TEXT TOKENS DATA_DIR

Cold: a new graph with an empty disk cache (walk, parse, resolve, rank, render); incremental:
after appending EDIT_TEXT to EDIT_FILE, the same graph (the stat walk, one parse, the edges that
change, warm-started PageRank, render); warm: a new graph from the disk copy (a new process's
first map). One JSON line, ms and KiB.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

from openmono_worker.codegraph import forget_graphs, graph_for, save_graph


def vm(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def build(root: Path, cache: Path, tokens: int) -> tuple[float, str, int]:
    started = time.perf_counter()
    graph, mapper = graph_for(root, cache)
    with graph.lock:
        if graph.refresh():
            save_graph(graph, cache)
        text = mapper.build(tokens, []).text
    return (time.perf_counter() - started) * 1000, text, len(graph.tags)


def main() -> None:
    root, edit, edit_text, tokens = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    cache = Path(sys.argv[5])
    before = vm("VmRSS")
    cold, text, files = build(root, cache, tokens)
    peak = vm("VmHWM")
    target = root / edit
    target.write_text(target.read_text() + edit_text)
    incremental, after, _ = build(root, cache, tokens)
    graph, _mapper = graph_for(root, cache)
    save_graph(graph, cache, force=True)
    forget_graphs()
    warm, _text, _ = build(root, cache, tokens)
    print(
        json.dumps(
            {
                "cold_ms": cold,
                "incremental_ms": incremental,
                "warm_ms": warm,
                "rss_before_kib": before,
                "peak_kib": peak,
                "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                "map_chars": len(text),
                "files": files,
                "changed": after != text,
            }
        )
    )


if __name__ == "__main__":
    main()
