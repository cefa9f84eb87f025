"""The code graph of one workspace: files' tags, what each name resolves to, weighted edges.

`CodeGraph.refresh()` walks the workspace (`_walk.py`), re-reads only files whose size or mtime
moved, and re-parses only content it has not seen (tags are kept by content hash, so a revert,
a copy or a branch switch back costs a hash, not a parse). Then only what the change can reach is
recomputed: the changed files' scopes and edges, and the edges of files that use a name whose
set of defining files changed. A new or deleted file rebuilds the lookup tables (the module maps
depend on the file set) and every edge.

A use of a name resolves, in order, to: the file's own definition; the files a named import
binds it to (followed through re-exports); the files the file sees (imports, includes, its
package) that define it (`confidence` "import"); else every file of the same language family
that defines it (`confidence` "name": only a name match). Edges weigh how much a file relies on
another: uses per name (square root), less for short, private and very common names and for name
matches, split between the candidates.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from openmono_worker.codegraph._extract import ParseTimeout, extract
from openmono_worker.codegraph._langs import spec_for
from openmono_worker.codegraph._resolve import Resolver, Scope
from openmono_worker.codegraph._tags import Def, FileTags, Skipped
from openmono_worker.codegraph._walk import MAX_FILES, Stamp, Walker
from openmono_worker.errors import CallCancelled

NAME_MATCH_LIMIT = 12  # a name defined in more files than this is not linked by name alone
NAME_MATCH_WEIGHT = 0.25
_FOLLOW_DEPTH = 4
_BINARY_PROBE = 8192
FAMILY = {"typescript": "js", "tsx": "js", "javascript": "js", "c": "c", "cpp": "c"}

Edge = tuple[str, str]  # (target file, name)


def family(lang: str) -> str:
    return FAMILY.get(lang, lang)


@dataclass
class Entry:
    mtime_ns: int
    size: int
    digest: str
    tags: FileTags


def name_weight(name: str, defined_in: int) -> float:
    w = 1.0
    if len(name) < 3:
        w *= 0.1
    if name.startswith("_"):
        w *= 0.2
    if defined_in > 5:
        w *= 0.2
    if len(name) >= 8 and ("_" in name.strip("_") or (name.lower() != name != name.upper())):
        w *= 2.0
    return w


class CodeGraph:
    """The graph of one workspace; callers hold `lock` and `refresh()` before each use."""

    def __init__(self, workspace: Path, max_files: int = MAX_FILES) -> None:
        self.workspace = workspace
        self.max_files = max_files
        self.lock = threading.Lock()
        self._walker = Walker(workspace, max_files)
        self.entries: dict[str, Entry] = {}
        self.by_digest: dict[str, FileTags] = {}
        self.skipped: list[Skipped] = []
        self.truncated = ""
        self.parses = 0  # files parsed so far (tests and the benchmark read it)
        self.full_builds = 0
        self.generation = 0  # bumped whenever anything changed (the map's cache key)
        self.tags: dict[str, FileTags] = {}
        # language family -> name -> files defining it
        self.defs_by_name: dict[str, dict[str, set[str]]] = defaultdict(dict)
        self.refs_by_name: dict[str, set[str]] = defaultdict(set)
        self.scopes: dict[str, Scope] = {}
        self.out_edges: dict[str, dict[Edge, tuple[float, str]]] = {}
        self.in_edges: dict[str, dict[Edge, float]] = defaultdict(dict)
        # target file -> name -> summed weight of the edges reaching it through that name
        self.in_weight: dict[str, dict[str, float]] = defaultdict(dict)
        self._resolver: Resolver | None = None
        self._unreadable: dict[str, tuple[Stamp, str]] = {}
        self._families: set[str] = set()
        # files whose out-edges changed since the map last looked (None: all of them)
        self.edges_changed: set[str] | None = None

    # -- reading files ------------------------------------------------------------------------

    def _read(self, rel: str, stamp: Stamp) -> FileTags | str:
        """The file's tags, or why it is left out."""
        try:
            data = (self.workspace / rel).read_bytes()
        except OSError as exc:
            return f"unreadable: {exc.strerror or exc}"
        if b"\0" in data[:_BINARY_PROBE]:
            return "binary"
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        entry = self.entries.get(rel)
        if entry is not None and entry.digest == digest:
            entry.mtime_ns, entry.size = stamp
            return entry.tags
        tags = self.by_digest.get(digest)
        if tags is None:
            spec = spec_for(rel)
            if spec is None:
                return "unknown language"
            try:
                tags = extract(spec, data)
            except ParseTimeout:
                return "parse timed out"
            except (ValueError, RuntimeError) as exc:  # a grammar that refuses the input
                return f"did not parse: {exc}"
            self.parses += 1
            self.by_digest[digest] = tags
        self.entries[rel] = Entry(stamp[0], stamp[1], digest, tags)
        return tags

    def refresh(self, cancel: threading.Event | None = None) -> set[str]:
        """Bring the graph up to date with the disk; the files that changed (or went away).

        A set `cancel` stops it between files with `CallCancelled`; what was read is kept and
        the next call carries on from there."""
        seen = self._walker.walk()
        skipped = list(seen.skipped)
        changed: set[str] = set()
        for n, (rel, stamp) in enumerate(seen.files.items()):
            if cancel is not None and n % 64 == 0 and cancel.is_set():
                raise CallCancelled
            entry = self.entries.get(rel)
            if entry is not None and (entry.mtime_ns, entry.size) == stamp:
                continue
            bad = self._unreadable.get(rel)
            if bad is not None and bad[0] == stamp:
                skipped.append(Skipped(rel, bad[1]))
                continue
            before = entry.digest if entry is not None else None
            got = self._read(rel, stamp)
            if isinstance(got, str):
                self._unreadable[rel] = (stamp, got)
                skipped.append(Skipped(rel, got))
                if self.entries.pop(rel, None) is not None:
                    changed.add(rel)
                continue
            self._unreadable.pop(rel, None)
            if self.entries[rel].digest != before:
                changed.add(rel)
        for gone in set(self.entries) - set(seen.files):
            del self.entries[gone]
            changed.add(gone)
        self.skipped, self.truncated = skipped, seen.truncated
        if changed or self._resolver is None:
            self._update(changed)
            self.generation += 1
        return changed

    # -- cross-file tables --------------------------------------------------------------------

    def _update(self, changed: set[str]) -> None:
        old = self.tags
        self.tags = {rel: e.tags for rel, e in sorted(self.entries.items())}
        structural = (
            self._resolver is None
            or set(old) != set(self.tags)
            or any(
                old[f].package != self.tags[f].package
                or (old[f].imports != self.tags[f].imports and family(old[f].lang) in ("c", "ruby"))
                for f in changed
                if f in old and f in self.tags
            )
        )
        if structural or len(changed) > max(64, len(self.tags) // 4):
            self._rebuild()
            return
        dirty: set[str] = set(changed)
        for rel in changed:
            before, after = old[rel], self.tags[rel]
            names_before = {d.name for d in before.defs}
            names_after = {d.name for d in after.defs}
            fam = family(after.lang)
            table = self.defs_by_name[fam]
            for name in names_before - names_after:
                table.get(name, set()).discard(rel)
            for name in names_after - names_before:
                table.setdefault(name, set()).add(rel)
            for name in names_before ^ names_after:
                dirty |= self.refs_by_name.get(name, set())
            for name in before.refs.keys() - after.refs.keys():
                self.refs_by_name[name].discard(rel)
            for name in after.refs.keys() - before.refs.keys():
                self.refs_by_name[name].add(rel)
            if before.imports != after.imports:
                # files that reach names through this one (re-exports); a name it gained or
                # lost reaches its users through `refs_by_name` above
                dirty |= {f for f, sc in self.scopes.items() if rel in sc.visible}
        resolver = self._resolver
        assert resolver is not None
        resolver.tags = self.tags
        for rel in changed:
            self.scopes[rel] = resolver.scope(rel)
        for rel in dirty:
            if rel in self.tags:
                self._set_edges(rel)

    def _rebuild(self) -> None:
        self.full_builds += 1
        self.defs_by_name = defaultdict(dict)
        refs_by_name: dict[str, set[str]] = defaultdict(set)
        for rel, t in self.tags.items():
            table = self.defs_by_name[family(t.lang)]
            for d in t.defs:
                table.setdefault(d.name, set()).add(rel)
            for name in t.refs:
                refs_by_name[name].add(rel)
        self.refs_by_name = refs_by_name
        self._resolver = Resolver(self.workspace, self.tags)
        self._families = {family(t.lang) for t in self.tags.values()}
        self.scopes = {rel: self._resolver.scope(rel) for rel in self.tags}
        self.out_edges = {}
        self.in_edges = defaultdict(dict)
        self.in_weight = defaultdict(dict)
        self.edges_changed = None
        for rel in self.tags:
            self._set_edges(rel)

    def _set_edges(self, rel: str) -> None:
        for (target, name), (old_w, _c) in self.out_edges.pop(rel, {}).items():
            self.in_edges[target].pop((rel, name), None)
            names = self.in_weight[target]
            left = names.get(name, 0.0) - old_w
            if left > 1e-12:
                names[name] = left
            else:
                names.pop(name, None)
        t = self.tags[rel]
        table = self.defs_by_name.get(family(t.lang), {})
        sc = self.scopes.get(rel) or Scope()
        out: dict[Edge, tuple[float, str]] = {}
        for name, count in t.refs.items():
            defining = table.get(name)
            if not defining or rel in defining:
                continue
            files, confidence = self._resolve(rel, name, defining, sc)
            if not files:
                continue
            w = name_weight(name, len(defining)) * math.sqrt(count) / len(files)
            if confidence == "name":
                w *= NAME_MATCH_WEIGHT
            for target in files:
                out[(target, name)] = (w, confidence)
                self.in_edges[target][(rel, name)] = w
                names = self.in_weight[target]
                names[name] = names.get(name, 0.0) + w
        self.out_edges[rel] = out
        if self.edges_changed is not None:
            self.edges_changed.add(rel)

    # -- resolution ---------------------------------------------------------------------------

    def _defining(self, rel: str, name: str) -> set[str]:
        return self.defs_by_name.get(family(self.tags[rel].lang), {}).get(name, set())

    def _through(self, files: tuple[str, ...], name: str, depth: int) -> list[str]:
        """Where `name` really is when `files` bind it without defining it (re-exports)."""
        out: list[str] = []
        for f in files:
            sc = self.scopes.get(f)
            if sc is None:
                continue
            defining = self._defining(f, name)
            if f in defining:
                out.append(f)
                continue
            if depth >= _FOLLOW_DEPTH:
                continue
            bound = sc.bound.get(name)
            if bound:
                out += self._through(bound, name, depth + 1)
            else:
                out += [g for g in defining if g in sc.visible]
        return out

    def resolve(self, rel: str, name: str) -> tuple[list[str], str]:
        """The files `name` used in `rel` refers to, and how sure that is ("import" or "name");
        ([], "") when it is defined nowhere in the workspace (or in `rel` itself)."""
        defining = self._defining(rel, name)
        if not defining or rel in defining:
            return [], ""
        return self._resolve(rel, name, defining, self.scopes.get(rel) or Scope())

    def _resolve(self, rel: str, name: str, defining: set[str], sc: Scope) -> tuple[list[str], str]:
        bound = sc.bound.get(name)
        if bound:
            hits = [f for f in bound if f in defining] or self._through(bound, name, 1)
            if hits:
                return sorted(set(hits)), "import"
        visible = sc.visible
        if len(visible) < len(defining):
            seen = [f for f in visible if f in defining]
        else:
            seen = [f for f in defining if f in visible]
        if seen:
            return sorted(seen), "import"
        if len(defining) > NAME_MATCH_LIMIT:
            return [], ""
        return sorted(defining), "name"

    # -- lookups ------------------------------------------------------------------------------

    def defs(self) -> list[tuple[str, Def]]:
        return [(rel, d) for rel, t in self.tags.items() for d in t.defs]

    def find(self, symbol: str, file: str | None = None) -> list[tuple[str, Def]]:
        """Definitions named `symbol`: a qualified name's tail (`Class.method`, `pkg.Type`), or
        the plain name; limited to `file` when given."""
        parts = symbol.replace("::", ".").replace("\\", ".").replace("#", ".").split(".")
        name = parts[-1]
        want = ".".join(parts)
        out = []
        if file is not None:
            files = [file]
        else:
            fams = self._families | {family(t.lang) for t in self.tags.values()}
            files = sorted({f for fam in fams for f in self.defs_by_name[fam].get(name, ())})
        for rel in files:
            t = self.tags.get(rel)
            if t is None:
                continue
            for d in t.defs:
                if d.name != name:
                    continue
                qname = d.qname
                pkg = f"{t.package}.{qname}" if t.package else qname
                if (
                    len(parts) == 1
                    or qname == want
                    or qname.endswith("." + want)
                    or pkg.endswith(want)
                ):
                    out.append((rel, d))
        return out
