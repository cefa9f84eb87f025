"""The repository map: the files and definitions that matter most, within a token budget.

Files are ranked by PageRank over the reference graph (`_rank.py`), restarting at the files in
play (touched by tools, or named in the conversation) and boosting edges that use names in play.
A definition's score is the rank its file receives through uses of that name (plus a little of
its file's own rank, so an unreferenced file in play still shows its outline); names in play
count ten times. The budget is met by a binary search on how many of the best definitions are
shown; each is its first line, under its file, with its line number, inside its class when the
class is shown too. Tokens are estimated at 3.2 characters each, as the agent does.
"""

from __future__ import annotations

import heapq
import re
import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from openmono_worker.codegraph._graph import CodeGraph
from openmono_worker.codegraph._rank import MENTION_BOOST, Row, pagerank, row_of
from openmono_worker.codegraph._tags import Def, FileTags

CHARS_PER_TOKEN = 3.2
_CONSIDERED_FILES = 150
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_PATH_RE = re.compile(r"[\w./-]+\.[A-Za-z0-9+]{1,5}")
_OWN_RANK_SHARE = 0.05
_MENTIONED = 10.0
_LISTED_KINDS = frozenset(
    {
        "class",
        "interface",
        "struct",
        "trait",
        "enum",
        "type",
        "function",
        "method",
        "module",
        "macro",
        "constant",
        "property",
    }
)


def estimate_tokens(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN)


@dataclass
class RepoMap:
    text: str
    tokens: int
    files_shown: int
    defs_shown: int
    files_total: int
    elapsed_ms: float = 0.0
    focus_files: list[str] = field(default_factory=list)


class Mapper:
    """Keeps the transition rows and the last ranks of one graph between map requests."""

    def __init__(self, graph: CodeGraph) -> None:
        self.graph = graph
        self._rows: dict[str, Row] = {}
        self._totals: dict[str, float] = {}
        self._ranks: dict[str, float] = {}
        self._personal: dict[str, float] = {}
        self._last: tuple[object, ...] | None = None
        self._last_map: RepoMap | None = None
        self._listed: dict[str, tuple[FileTags, list[Def]]] = {}

    def _sync_rows(self) -> bool:
        """Bring the rows up to date with the graph's edges; whether any row really moved (a
        file whose edges were recomputed to the same ones, as after most body edits, does not)."""
        g = self.graph
        changed = g.edges_changed
        moved = False
        if changed is None:
            self._rows, self._totals = {}, {}
            changed = set(g.out_edges)
            moved = True
        for rel in changed:
            out = g.out_edges.get(rel)
            if out is None:
                moved |= self._rows.pop(rel, None) is not None
                self._totals.pop(rel, None)
            else:
                row, total = row_of(out)
                if self._rows.get(rel) != row or self._totals.get(rel) != total:
                    self._rows[rel], self._totals[rel] = row, total
                    moved = True
        for rel in [r for r in self._rows if r not in g.tags]:
            del self._rows[rel], self._totals[rel]
            moved = True
        g.edges_changed = set()
        return moved

    def in_play(self, text: str, files: list[str]) -> tuple[list[str], set[str]]:
        """Workspace files and defined names the conversation text and the tools named."""
        g = self.graph
        found = [f for f in files if f in g.tags]
        by_base: dict[str, list[str]] = defaultdict(list)
        if text:
            for rel in g.tags:
                by_base[rel.rpartition("/")[2]].append(rel)
            for token in _PATH_RE.findall(text):
                token = token.strip("./")
                if token in g.tags:
                    found.append(token)
                    continue
                tail = [r for r in by_base.get(token.rpartition("/")[2], []) if r.endswith(token)]
                if len(tail) <= 3:
                    found += tail
        tables = list(g.defs_by_name.values())
        names = {n for n in set(_NAME_RE.findall(text)) if any(t.get(n) for t in tables)}
        return list(dict.fromkeys(found)), names

    def build(self, budget_tokens: int, focus_files: list[str], text: str = "") -> RepoMap:
        started = time.perf_counter()
        g = self.graph
        files, names = self.in_play(text, focus_files)
        key = (g.generation, budget_tokens, tuple(files), tuple(sorted(names)))
        if key == self._last and self._last_map is not None:
            return self._last_map
        moved = self._sync_rows()
        rows, totals = self._rows, self._totals
        if names:
            rows, totals = dict(self._rows), dict(self._totals)
            for name in names:
                for rel in g.refs_by_name.get(name, ()):
                    if rel in g.out_edges:
                        rows[rel], totals[rel] = row_of(g.out_edges[rel], names)
        personal: dict[str, float] = dict.fromkeys(files, 1.0)
        for name in names:
            defining = {f for t in g.defs_by_name.values() for f in t.get(name, ())}
            for f in defining:
                personal[f] = personal.get(f, 0.0) + 0.5 / len(defining)
        # the same nodes, rows and restart as the last ranking: its ranks are the answer
        same = (
            not moved
            and not names
            and personal == self._personal
            and g.tags.keys() == (self._ranks.keys())
        )
        if same:
            ranks = self._ranks
        else:
            ranks, _ = pagerank(list(g.tags), rows, personal or None, self._ranks or None)
        self._ranks, self._personal = ranks, personal
        ranked = self._rank_defs(ranks, totals, names, files, _fits_at_most(budget_tokens))
        text_out, shown_files, shown_defs = self._fit(ranked, budget_tokens)
        result = RepoMap(
            text=text_out,
            tokens=estimate_tokens(text_out),
            files_shown=shown_files,
            defs_shown=shown_defs,
            files_total=len(g.tags),
            elapsed_ms=(time.perf_counter() - started) * 1000,
            focus_files=files,
        )
        self._last, self._last_map = key, result
        return result

    def _rank_defs(
        self,
        ranks: dict[str, float],
        totals: dict[str, float],
        names: set[str],
        focus: list[str],
        limit: int,
    ) -> list[tuple[float, str, Def]]:
        """Each definition's share of the rank its file gets: the file's rank split over its
        names by the weight of their uses, plus what the files in play send it exactly."""
        g = self.graph
        sent: dict[tuple[str, str], float] = defaultdict(float)
        for src in focus:
            total = totals.get(src, 0.0)
            if total <= 0:
                continue
            for (target, name), (w, _conf) in g.out_edges.get(src, {}).items():
                carried = w * MENTION_BOOST if name in names else w
                sent[(target, name)] += ranks.get(src, 0.0) * carried / total
        top = heapq.nlargest(_CONSIDERED_FILES, ranks, key=ranks.__getitem__)
        out: list[tuple[float, str, Def]] = []
        for rel in top:
            tags = g.tags[rel]
            cached = self._listed.get(rel)
            if cached is None or cached[0] is not tags:
                cached = self._listed[rel] = (
                    tags,
                    [d for d in tags.defs if d.kind in _LISTED_KINDS],
                )
            defs = cached[1]
            if not defs:
                continue
            rank = ranks[rel]
            weights = g.in_weight.get(rel, {})
            total_in = sum(weights.values())
            own = rank * _OWN_RANK_SHARE / len(defs)
            for d in defs:
                share = weights.get(d.name, 0.0) / total_in if total_in > 0 else 0.0
                score = rank * share + sent.get((rel, d.name), 0.0) + own
                if d.name in names:
                    score *= _MENTIONED
                out.append((score, rel, d))
        # the best `limit` in the order a full sort gives (only those can fit the budget)
        return heapq.nsmallest(limit, out, key=lambda t: (-t[0], t[1], t[2].line))

    def _fit(self, ranked: list[tuple[float, str, Def]], budget: int) -> tuple[str, int, int]:
        if budget <= 0 or not ranked:
            return "", 0, 0
        lo, hi = 0, min(len(ranked), _fits_at_most(budget))
        best = ("", 0, 0)
        while lo <= hi:
            mid = (lo + hi) // 2
            text, files = render(ranked[:mid], self.graph.tags)
            if estimate_tokens(text) <= budget:
                best = (text, files, mid)
                lo = mid + 1
            else:
                hi = mid - 1
        return best


def _fits_at_most(budget: int) -> int:
    """How many definitions a map of `budget` tokens can show at most: every shown line costs
    a few tokens, so more than budget/3 never fit."""
    return max(0, budget // 3 + 1)


def render(
    chosen: list[tuple[float, str, Def]], all_defs: Mapping[str, FileTags]
) -> tuple[str, int]:
    """The map text of `chosen` definitions, and how many files it shows."""
    by_file: dict[str, list[Def]] = defaultdict(list)
    order: dict[str, float] = {}
    for score, rel, d in chosen:
        by_file[rel].append(d)
        order[rel] = max(order.get(rel, 0.0), score)
    lines: list[str] = []
    for rel in sorted(by_file, key=lambda r: (-order[r], r)):
        picked = by_file[rel]
        qnames = {d.qname for d in picked}
        # the enclosing classes of what is shown, so a method is read inside its class
        for d in list(picked):
            parent = d.parent
            while parent and parent not in qnames:
                owner = next((x for x in all_defs[rel].defs if x.qname == parent), None)
                if owner is None:
                    break
                picked.append(owner)
                qnames.add(parent)
                parent = owner.parent
        lines.append(f"{rel}:")
        for d in sorted(set(picked), key=lambda x: (x.line, x.col)):
            depth = _depth(d, qnames)
            lines.append(f"{d.line:>5}│{'  ' * depth}{d.signature}")
    return "\n".join(lines), len(by_file)


def _depth(d: Def, shown: set[str]) -> int:
    depth, parent = 0, d.parent
    while parent and parent in shown:
        depth += 1
        parent = parent.rpartition(".")[0]
    return depth
