"""PageRank over the file graph, personalised on the files and names in play.

Power iteration in plain Python over per-file rows of transition probabilities (no numpy in the
worker). A file's row is its out-edges summed per target and normalised; the rows are cached
and rebuilt only for files whose edges changed. Names in play multiply the weight of the edges
that use them (`MENTION_BOOST`), files in play get the restart probability. The previous vector
is the starting point of the next run, so after a small edit a few iterations converge.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping

DAMPING = 0.85
MENTION_BOOST = 10.0
TOLERANCE = 1e-6
MAX_ITERATIONS = 60

Row = tuple[tuple[str, float], ...]


def row_of(
    out: Mapping[tuple[str, str], tuple[float, str]], boost: Collection[str] = ()
) -> tuple[Row, float]:
    """A file's transition probabilities, and the total weight they were normalised by."""
    summed: dict[str, float] = defaultdict(float)
    for (target, name), (w, _conf) in out.items():
        summed[target] += w * MENTION_BOOST if name in boost else w
    total = sum(summed.values())
    if total <= 0:
        return (), 0.0
    return tuple((t, w / total) for t, w in summed.items()), total


def pagerank(
    nodes: Collection[str],
    rows: Mapping[str, Row],
    personal: Mapping[str, float] | None = None,
    start: Mapping[str, float] | None = None,
) -> tuple[dict[str, float], int]:
    """The rank of every node (summing to 1), and the iterations it took."""
    n = len(nodes)
    if n == 0:
        return {}, 0
    if personal:
        total_p = sum(personal.values())
        restart = {k: v / total_p for k, v in personal.items() if k in rows or k in nodes}
    else:
        restart = {}
    uniform = 1.0 / n
    rank = dict(start) if start else {}
    missing = [k for k in nodes if k not in rank]
    for k in missing:
        rank[k] = uniform
    norm = sum(rank[k] for k in nodes)
    rank = {k: rank[k] / norm for k in nodes}
    iterations = 0
    for iterations in range(1, MAX_ITERATIONS + 1):  # noqa: B007 - read after the loop
        nxt = dict.fromkeys(rank, 0.0)
        dangling = 0.0
        for node, r in rank.items():
            row = rows.get(node)
            if not row:
                dangling += r
                continue
            share = DAMPING * r
            for target, p in row:
                nxt[target] += share * p
        spread = (1.0 - DAMPING) + DAMPING * dangling
        if restart:
            for k, v in restart.items():
                nxt[k] += spread * v
        else:
            add = spread * uniform
            for k in nxt:
                nxt[k] += add
        delta = sum(abs(nxt[k] - rank[k]) for k in nxt)
        rank = nxt
        if delta < TOLERANCE:
            break
    return rank, iterations
