"""References: ours against real language servers, precision and recall on sampled symbols.

    python bench/codeintel_refs.py [--symbols N]

Two real trees from `_corpora.py` (pinned, fetched once by the registries' clients):
- Python: Django 5.1.4's `django/` package. Ours is CodeIntel's Python index (`ix.references`),
  the truth basedpyright's `textDocument/references` (the worker's dependency).
- TypeScript: rxjs 7.8.1's `src/`. Ours is the code graph's uses linked by imports (what
  CodeIntel find-references lists first; the "possibly" uses by name alone are scored apart),
  the truth typescript-language-server 5.1.3 + TypeScript 5.9.3, installed by `openmono lsp
  install typescript`'s code into the bench's cache dir (a tsconfig.json that includes every
  file is written at the root: without one the server sees only what the open file imports).

N symbols per tree (default 50) are sampled with a fixed seed among functions, classes and
methods. A reference is a (file, line) pair; the definition's own line is left out on both sides
(`includeDeclaration` false). Precision = shared / ours, recall = shared / the server's, pooled
over the sampled symbols (and the mean per symbol). Goal (issue 39): precision >= 0.9, recall >=
0.8. Not timed: the figures are what each side found.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from urllib.parse import unquote, urlparse

import lsprotocol.types as lsp
from _corpora import CORPORA, fetch
from _map_vs_aider import cache_dir
from openmono_worker.codegraph import graph_for
from openmono_worker.codegraph._locate import uses
from openmono_worker.codegraph._ops import linked
from openmono_worker.codeintel import index_for, install, installable, server_for, stop_servers
from openmono_worker.codeintel._positions import to_utf16

SEED = 39
TIMEOUT_S = 300.0
Spot = tuple[str, int]  # workspace-relative file, 1-based line


class Score:
    def __init__(self) -> None:
        self.shared = self.ours = self.theirs = 0
        self.per: list[tuple[float, float]] = []
        self.misses: list[str] = []

    def add(self, name: str, ours: set[Spot], theirs: set[Spot]) -> None:
        both = ours & theirs
        self.shared += len(both)
        self.ours += len(ours)
        self.theirs += len(theirs)
        p = len(both) / len(ours) if ours else 1.0
        r = len(both) / len(theirs) if theirs else 1.0
        self.per.append((p, r))
        if p < 1 or r < 1:
            extra = sorted(ours - theirs)[:2]
            missed = sorted(theirs - ours)[:2]
            self.misses.append(f"{name}: ours only {extra}, server only {missed}")

    def line(self, label: str) -> str:
        p = self.shared / self.ours if self.ours else 1.0
        r = self.shared / self.theirs if self.theirs else 1.0
        mp = statistics.mean(x for x, _ in self.per)
        mr = statistics.mean(y for _, y in self.per)
        return (
            f"{label:42s} precision {p:.3f} recall {r:.3f} (pooled: {self.shared} shared, "
            f"{self.ours} ours, {self.theirs} server's); per symbol {mp:.3f} / {mr:.3f}"
        )


def server_refs(ws: Path, rel: str, line: int, col: int, name: str) -> set[Spot]:
    path = ws / rel
    server = server_for(ws, path, rel, trusted=True, data_dir=cache_dir() / "lsp-data")
    server.sync_from_disk(path)
    text = path.read_text(errors="replace").splitlines()[line - 1]
    pos = lsp.Position(line=line - 1, character=to_utf16(text, col))
    found = server.request(
        lsp.TEXT_DOCUMENT_REFERENCES,
        lsp.ReferenceParams(
            text_document=lsp.TextDocumentIdentifier(uri=path.as_uri()),
            position=pos,
            context=lsp.ReferenceContext(include_declaration=False),
        ),
        TIMEOUT_S,
    )
    out: set[Spot] = set()
    for loc in found or []:
        target = Path(unquote(urlparse(loc.uri).path))
        try:
            out.add((target.relative_to(ws).as_posix(), loc.range.start.line + 1))
        except ValueError:
            continue  # outside the workspace (the standard library, typeshed)
    out.discard((rel, line))
    return out


def warm_up(ws: Path, rel: str, line: int, col: int, name: str) -> None:
    """Wait for the server's project load: typescript-language-server answers [] while it loads
    (seen here for ~5 s on rxjs), so ask until two answers in a row agree and are not empty."""
    last: set[Spot] | None = None
    for _ in range(45):
        got = server_refs(ws, rel, line, col, name)
        if got and got == last:
            return
        last = got
        time.sleep(2)


def sample(items: list[tuple[str, ...]], n: int) -> Iterable[tuple[str, ...]]:
    return random.Random(SEED).sample(sorted(items), min(n, len(items)))


def wanted(name: str) -> bool:
    return len(name) >= 4 and not name.startswith("_") and not name.startswith("test")


def _def_spot(ws: Path, rel: str, name: str) -> tuple[int, int, str]:
    for n, text in enumerate((ws / rel).read_text().splitlines(), 1):
        if text.startswith(f"def {name}("):
            return n, 4, name
    raise SystemExit(f"no def {name} in {rel}")


def python(ws: Path, n: int) -> tuple[Score, Score]:
    ix = index_for(ws)
    with ix.lock:
        ix.refresh()
    picks = [
        (q, s.file, str(s.line), s.name)
        for q, s in ix.symbols.items()
        if s.kind in ("function", "class", "method") and wanted(s.name)
    ]
    score = Score()
    warm_up(ws, "django/utils/text.py", *_def_spot(ws, "django/utils/text.py", "slugify"))
    for qname, rel, line_s, name in sample(picks, n):
        line = int(line_s)
        text = (ws / rel).read_text().splitlines()[line - 1]
        col = text.find(name, text.find("def " if " def " in f" {text}" else "class "))
        ours = {(u.file, u.line) for u in ix.references(qname)} - {(rel, line)}
        score.add(qname, ours, server_refs(ws, rel, line, col, name))
    return score, Score()


def typescript(ws: Path, n: int) -> tuple[Score, Score]:
    config = {
        "compilerOptions": {"target": "es2018", "lib": ["es2018", "dom"], "noEmit": True},
        "include": ["**/*.ts"],
    }
    (ws / "tsconfig.json").write_text(json.dumps(config))
    graph, _mapper = graph_for(ws)
    with graph.lock:
        graph.refresh()
    picks = [
        (rel, d.name, str(d.line))
        for rel, tags in graph.tags.items()
        for d in tags.defs
        if d.kind in ("function", "class", "method") and wanted(d.name)
    ]
    sure, with_maybe = Score(), Score()
    warm_up(ws, "internal/NotificationFactories.ts", 23, 16, "nextNotification")
    for rel, name, line_s in sample(picks, n):
        d = next(x for x in graph.tags[rel].defs if x.name == name and x.line == int(line_s))
        sure_files, maybe_files = linked(graph, (rel, d))

        def spots(files: list[str], name: str = name) -> set[Spot]:
            return {(f, u.line) for f in files for u in uses(graph, f, {name})}

        theirs = server_refs(ws, rel, d.line, d.col, name)
        ours = spots(sure_files) - {(rel, d.line)}
        sure.add(f"{rel}:{name}", ours, theirs)
        with_maybe.add(f"{rel}:{name}", ours | spots(maybe_files), theirs)
    return sure, with_maybe


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--symbols", type=int, default=50)
    args = parser.parse_args()
    cache = cache_dir()
    data = cache / "lsp-data"
    ts = installable("typescript")
    if not (data / "lsp" / ts.name).is_dir():
        print(f"installing {' '.join(ts.packages)} into {data} (once)", flush=True)
        install(data, ts)
    trees = {c.name: c for c in CORPORA}
    runs: list[tuple[str, str, Callable[[Path, int], tuple[Score, Score]]]] = [
        ("django", "django", python),
        ("rxjs", "", typescript),
    ]
    print(f"references vs language servers, {args.symbols} symbols per tree (seed {SEED})")
    for name, inner, fn in runs:
        corpus = trees[name]
        src = fetch(corpus, cache / "corpora")
        with tempfile.TemporaryDirectory(prefix=f"bench-refs-{name}-") as tmp:
            ws = Path(tmp).resolve() / "ws"
            shutil.copytree(src / inner if inner else src, ws / inner if inner else ws)
            files = sum(1 for _ in ws.rglob("*.py" if corpus.language == "python" else "*.ts"))
            print(f"{name} ({corpus.spec}{', ' + inner + '/' if inner else ''}, {files} files)")
            try:
                sure, with_maybe = fn(ws, args.symbols)
            finally:
                stop_servers(ws)
            print("  " + sure.line("ours (resolved)"), flush=True)
            if with_maybe.per:
                print("  " + with_maybe.line("ours + the 'possibly' uses by name"), flush=True)
            for miss in sure.misses[:8]:
                print(f"    {miss}")
    load = os.getloadavg()
    print(f"measured on {os.cpu_count()} cores, load average {load[0]:.1f} (shared machine)")


if __name__ == "__main__":
    main()
