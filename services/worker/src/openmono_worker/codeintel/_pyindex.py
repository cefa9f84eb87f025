"""The Python index of a workspace: every file scanned once, rescanned when it changes.

`PyIndex.refresh()` walks the workspace (skipping virtualenvs, VCS and cache directories), stats
every `.py` file and rescans only those whose size or mtime moved (and whose content hash did
too); when anything changed, the cross-file tables are rebuilt: symbols by qualified name and by
name, subclasses, and every reference resolved to the symbols it touches (`mod.Class.method`
touches the module, the class and the method). Resolution follows imports and re-exports
(`from .impl import f` in a package's `__init__`), methods through base classes, and `self`/`cls`.
What it cannot know without type inference (a method called on a local variable) is kept apart
as an unresolved attribute use, so a caller can say "possibly" instead of guessing.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmono_worker.codeintel._pyscan import FileFacts, HeadKind, Symbol, scan_source
from openmono_worker.codeintel._watch import walk_sources
from openmono_worker.errors import CallCancelled

_MAX_FILE_BYTES = 2 * 1024 * 1024
_MAX_HOPS = 20


@dataclass(frozen=True)
class Use:
    """One resolved reference: where, by whom, how."""

    file: str
    line: int
    col: int
    scope: str
    kind: str


@dataclass
class _Entry:
    mtime_ns: int
    size: int
    digest: str
    facts: FileFacts


def module_name(path: Path, workspace: Path) -> tuple[str, bool]:
    """Dotted module name of a file (packages found by their `__init__.py`), and is-package."""
    is_package = path.name == "__init__.py"
    parts = [] if is_package else [path.stem]
    folder = path.parent
    while folder != workspace and (folder / "__init__.py").is_file():
        parts.append(folder.name)
        folder = folder.parent
    if not parts:  # an __init__.py right in the workspace root
        parts = [workspace.name]
    return ".".join(reversed(parts)), is_package


def python_files(workspace: Path) -> list[Path]:
    return walk_sources(workspace, (".py", ".pyi"))


class PyIndex:
    """The index of one workspace; `refresh()` before each query (cheap when nothing changed)."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.lock = threading.Lock()
        self._entries: dict[Path, _Entry] = {}
        self.scans = 0  # files parsed so far (tests and the benchmark read it)
        self.symbols: dict[str, Symbol] = {}
        self.by_name: dict[str, list[Symbol]] = {}
        self.modules: dict[str, FileFacts] = {}
        self.subclasses: dict[str, list[str]] = {}
        self.bases: dict[str, list[str]] = {}
        # per file: what its references resolved to, and the interface they were resolved against
        # (queries gather from these per file: an edit then costs one file, not a merge of all)
        self._resolved: dict[str, tuple[dict[str, list[Use]], dict[str, list[Use]]]] = {}
        self._interfaces: dict[str, object] = {}
        self.full_builds = 0
        self._pending: set[str] = set()

    # -- scanning -----------------------------------------------------------------------------

    def refresh(self, cancel: threading.Event | None = None) -> int:
        """Rescan what changed; returns how many files were (re)scanned or dropped.

        A set `cancel` stops it between files with `CallCancelled`; what was scanned is kept,
        so the next call carries on from there."""
        changed = 0
        touched = self._pending  # survives a cancelled refresh: those files still need resolving
        seen: set[Path] = set()
        for n, path in enumerate(python_files(self.workspace)):
            if cancel is not None and n % 64 == 0 and cancel.is_set():
                raise CallCancelled
            seen.add(path)
            try:
                st = path.stat()
            except OSError:
                continue
            entry = self._entries.get(path)
            if entry is not None and (entry.mtime_ns, entry.size) == (st.st_mtime_ns, st.st_size):
                continue
            if st.st_size > _MAX_FILE_BYTES:
                continue
            try:
                data = path.read_bytes()
            except OSError:
                continue
            digest = hashlib.blake2b(data, digest_size=16).hexdigest()
            if entry is not None and entry.digest == digest:
                entry.mtime_ns, entry.size = st.st_mtime_ns, st.st_size
                continue
            module, is_package = module_name(path, self.workspace)
            rel = os.path.relpath(path, self.workspace)
            facts = scan_source(data.decode("utf-8", "replace"), module, rel, is_package)
            self._entries[path] = _Entry(st.st_mtime_ns, st.st_size, digest, facts)
            self.scans += 1
            changed += 1
            touched.add(rel)
        for gone in set(self._entries) - seen:
            touched.add(self._entries.pop(gone).facts.file)
            changed += 1
        if touched or not self.modules:
            self._build(touched)
        self._pending = set()
        return changed

    def state(self) -> dict[str, Any]:
        """Scanned files and resolved references, as one consistent snapshot (the disk copy)."""
        return {
            "entries": self._entries,
            "resolved": self._resolved,
            "interfaces": self._interfaces,
            "bases": self.bases,
            "subclasses": dict(self.subclasses),
        }

    def adopt(self, state: dict[str, Any]) -> None:
        """Start from a snapshot (the disk copy); `refresh` then checks every file against it."""
        self._entries = dict(state["entries"])
        self._resolved = dict(state["resolved"])
        self._interfaces = dict(state["interfaces"])
        self.bases = dict(state["bases"])
        self.subclasses = defaultdict(list, state["subclasses"])

    def files(self) -> list[FileFacts]:
        return [e.facts for _, e in sorted(self._entries.items())]

    # -- cross-file tables ---------------------------------------------------------------------

    @staticmethod
    def _interface(facts: FileFacts) -> object:
        """What other files' references resolve against: names, kinds, bases, bindings."""
        names = tuple((s.qname, s.kind, s.bases) for s in facts.symbols)
        return (
            facts.module,
            names,
            tuple(sorted(facts.bindings.items())),
            tuple(facts.star_imports),
        )

    def _build(self, changed: set[str]) -> None:
        """Rebuild the tables; re-resolve only the changed files when no interface moved."""
        self.symbols, self.by_name, self.modules = {}, defaultdict(list), {}
        for facts in self.files():
            if facts.module in self.modules:
                continue  # a second file with the same module name (scripts): first one wins
            self.modules[facts.module] = facts
            for sym in facts.symbols:
                self.symbols.setdefault(sym.qname, sym)
                self.by_name[sym.name].append(sym)
        by_file = {f.file: f for f in self.modules.values()}
        before = self._interfaces
        if not before or len(changed) > len(by_file) // 2:
            self._interfaces = {f: self._interface(facts) for f, facts in by_file.items()}
        else:
            self._interfaces = dict(before)
            for f in changed:
                if f in by_file:
                    self._interfaces[f] = self._interface(by_file[f])
                else:
                    self._interfaces.pop(f, None)
        same = bool(before) and all(self._interfaces.get(f) == before.get(f) for f in changed)
        if not same or not self._resolved:
            self._resolve_all()
        else:
            for f in changed:
                if f in by_file:  # (not: a second file with a module name already taken)
                    self._resolved[f] = self._resolve_file(by_file[f])

    def _resolve_all(self) -> None:
        self.full_builds += 1
        self.bases, self.subclasses = {}, defaultdict(list)
        for sym in self.symbols.values():
            if sym.kind != "class":
                continue
            home = self.modules.get(self._module_of(sym.qname) or "")
            resolved = []
            for head_kind, head, rest in sym.bases:
                touched = self._resolve(home, head_kind, head, rest) if home else []
                if len(touched) == len(rest) + 1 and touched[-1] in self.symbols:
                    resolved.append(touched[-1])
            self.bases[sym.qname] = resolved
            for base in resolved:
                self.subclasses[base].append(sym.qname)
        self._resolved = {f.file: self._resolve_file(f) for f in self.modules.values()}

    def _resolve_file(self, facts: FileFacts) -> tuple[dict[str, list[Use]], dict[str, list[Use]]]:
        found: dict[str, list[Use]] = defaultdict(list)
        unknown: dict[str, list[Use]] = defaultdict(list)
        for ref in facts.refs:
            touched = self._resolve(facts, ref.head_kind, ref.head, ref.rest)
            for i, (qname, (line, col)) in enumerate(zip(touched, ref.spots, strict=False)):
                if i == 0 and ref.head_kind in ("self", "super"):
                    continue  # `self.x` / `super().x` use x, not the class
                found[qname].append(Use(facts.file, line, col, ref.scope, ref.kind))
            # attributes past what resolved are on objects of unknown type (head = component 0)
            first = max(len(touched), 1)
            for i in range(first, len(ref.rest) + 1):
                line, col = ref.spots[i] if i < len(ref.spots) else ref.spots[-1]
                unknown[ref.rest[i - 1]].append(Use(facts.file, line, col, ref.scope, ref.kind))
        return dict(found), dict(unknown)

    def _module_of(self, qname: str) -> str | None:
        sym = self.symbols.get(qname)
        while sym is not None and sym.kind != "module":
            sym = self.symbols.get(sym.parent or "")
        return sym.qname if sym is not None else None

    def _resolve(
        self, facts: FileFacts, head_kind: HeadKind, head: str, rest: tuple[str, ...]
    ) -> list[str]:
        """The qualified names a reference touches, head first, as far as they resolve."""
        if head_kind == "unknown":
            return []
        start = self._lookup(facts, head) if head_kind == "module" else self.canonical(head)
        if start is None:
            return []
        touched = [start]
        if head_kind == "super" and rest:
            # `super().m` skips the class itself: the first base (in order) that has m
            found = (self._member(b, rest[0], 1) for b in self.bases.get(start, []))
            first = next((f for f in found if f is not None), None)
            if first is None:
                return touched
            touched.append(first)
            rest = rest[1:]
        for part in rest:
            nxt = self._member(touched[-1], part, 0)
            if nxt is None:
                break
            touched.append(nxt)
        return touched

    def _lookup(self, facts: FileFacts, name: str) -> str | None:
        target = facts.bindings.get(name)
        if target is not None:
            return self.canonical(target)
        for star in facts.star_imports:
            found = self._member(star, name, 0) if star in self.modules else None
            if found is not None:
                return found
        return None

    def canonical(self, target: str, hops: int = 0) -> str | None:
        """A dotted target (an import's) as the qname of what it finally names, or None."""
        if target in self.symbols:
            return target
        if hops > _MAX_HOPS or "." not in target:
            return None
        prefix, _, last = target.rpartition(".")
        base = self.canonical(prefix, hops + 1)
        return self._member(base, last, hops + 1) if base is not None else None

    def _member(self, owner: str, name: str, hops: int) -> str | None:
        if hops > _MAX_HOPS:
            return None
        direct = f"{owner}.{name}"
        sym = self.symbols.get(owner)
        if sym is None:
            return None
        if sym.kind == "module":
            if direct in self.symbols:
                return direct
            facts = self.modules.get(owner)
            if facts is not None and name in facts.bindings:
                return self.canonical(facts.bindings[name], hops + 1)
            return None
        if sym.kind == "class":
            if direct in self.symbols:
                return direct
            for base in self.bases.get(owner, []):
                found_in_base = self._member(base, name, hops + 1)
                if found_in_base is not None:
                    return found_in_base
        return None

    # -- queries -------------------------------------------------------------------------------

    def find(self, symbol: str, file: str | None = None) -> list[Symbol]:
        """Symbols named `symbol`: an exact qualified name, else a dotted suffix (`Class.meth`)."""
        exact = self.symbols.get(symbol) or self.symbols.get(self.canonical(symbol) or "")
        if exact is not None and (file is None or exact.file == file):
            return [exact]  # a qualified name, or a re-export of one (package.func)
        last = symbol.rpartition(".")[2]
        found = [
            s
            for s in self.by_name.get(last, [])
            if (s.qname == symbol or s.qname.endswith("." + symbol))
            and (file is None or s.file == file)
        ]
        return sorted(found, key=lambda s: (s.file, s.line))

    def members(self, qname: str) -> list[Symbol]:
        """Every symbol nested in `qname` (a module's or class's contents, transitively)."""
        prefix = qname + "."
        facts = self.modules.get(self._module_of(qname) or "")
        pool = facts.symbols if facts is not None else list(self.symbols.values())
        return [s for s in pool if s.qname.startswith(prefix)]

    def references(self, qname: str) -> list[Use]:
        found = {u for uses, _ in self._resolved.values() for u in uses.get(qname, ())}
        return sorted(found, key=lambda u: (u.file, u.line, u.col))

    def unresolved(self, attr: str) -> list[Use]:
        """Uses of `.attr` on objects of unknown type (a local, a call's result, ...)."""
        found = {u for _, unknown in self._resolved.values() for u in unknown.get(attr, ())}
        return sorted(found, key=lambda u: (u.file, u.line, u.col))

    def enclosing(self, scope: str) -> Symbol | None:
        return self.symbols.get(scope)
