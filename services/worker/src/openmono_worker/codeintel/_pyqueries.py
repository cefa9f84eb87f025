"""The CodeIntel operations over a `PyIndex`, each rendering text for the model.

Locations are `file:line` (1-based, relative to the workspace), one per line, so results can be
compared and followed up with FileRead. Blast radius walks dependents breadth first: whatever
uses the symbol (or one of its members), then whatever uses those, up to `_MAX_DEPTH`; an import
alone is not a dependency (it only binds a name), and module-level code is reported but not
expanded further (every importer of a module would otherwise depend on everything in it).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from openmono_worker.codegraph import match_rank
from openmono_worker.codeintel._pyindex import PyIndex, Use
from openmono_worker.codeintel._pyscan import Symbol

_MAX_DEPTH = 20
_MAX_LINES = 400
_MAX_POSSIBLE = 30
_MEMBER_KINDS = ("class", "function", "method", "variable", "attribute")


def _at(sym: Symbol) -> str:
    return f"{sym.file}:{sym.line}"


def describe(sym: Symbol) -> str:
    return f"{sym.qname} ({sym.kind}) {_at(sym)}"


def _cap(lines: list[str], what: str) -> list[str]:
    if len(lines) <= _MAX_LINES:
        return lines
    return [*lines[:_MAX_LINES], f"... {len(lines) - _MAX_LINES} more {what}"]


def _possible(ix: PyIndex, sym: Symbol, exclude: set[tuple[str, int]]) -> list[str]:
    """Uses of `.name` on receivers of unknown type (methods and attributes only)."""
    if sym.kind not in ("method", "attribute"):
        return []
    extra = [u for u in ix.unresolved(sym.name) if (u.file, u.line) not in exclude]
    if not extra:
        return []
    shown = sorted({(u.file, u.line) for u in extra})
    out = [f"possibly also ({len(shown)}: .{sym.name} on objects of unknown type):"]
    out += [f"  {f}:{line}" for f, line in shown[:_MAX_POSSIBLE]]
    if len(shown) > _MAX_POSSIBLE:
        out.append(f"  ... {len(shown) - _MAX_POSSIBLE} more")
    return out


def find_references(ix: PyIndex, sym: Symbol) -> str:
    uses = ix.references(sym.qname)
    head = f"{describe(sym)}"
    files = sorted({u.file for u in uses})
    lines = [head, f"{len(uses)} references in {len(files)} files:"]
    body = [f"{u.file}:{u.line}:{u.col + 1} {u.kind} in {u.scope}" for u in uses]
    lines += _cap(body, "references")
    lines += _possible(ix, sym, {(u.file, u.line) for u in uses})
    return "\n".join(lines)


def callers(ix: PyIndex, sym: Symbol) -> str:
    calls = [u for u in ix.references(sym.qname) if u.kind in ("call", "decorator")]
    by_scope: dict[str, list[Use]] = defaultdict(list)
    for u in calls:
        by_scope[u.scope].append(u)
    lines = [describe(sym), f"{len(by_scope)} callers ({len(calls)} calls):"]
    body = []
    for scope, where in sorted(by_scope.items()):
        caller = ix.symbols.get(scope)
        name = describe(caller) if caller else scope
        at = ", ".join(f"{u.file}:{u.line}" for u in where)
        body.append(f"{name}  calls at {at}")
    lines += _cap(body, "callers")
    lines += _possible(ix, sym, {(u.file, u.line) for u in calls})
    return "\n".join(lines)


def _ancestors(ix: PyIndex, qname: str, depth: int, out: list[str], seen: set[str]) -> None:
    sym = ix.symbols[qname]
    resolved = ix.bases.get(qname, [])
    for base in resolved:
        if base in seen:
            continue
        seen.add(base)
        out.append("  " * depth + describe(ix.symbols[base]))
        _ancestors(ix, base, depth + 1, out, seen)
    if len(resolved) < len(sym.bases):  # bases from outside the workspace
        known = {b.rpartition(".")[2] for b in resolved}
        for _kind, head, rest in sym.bases:
            name = ".".join([head, *rest]) if head else ".".join(rest)
            if name.rpartition(".")[2] not in known:
                out.append("  " * depth + f"{name} (outside the workspace)")


def _descendants(ix: PyIndex, qname: str, depth: int, out: list[str], seen: set[str]) -> None:
    for sub in sorted(ix.subclasses.get(qname, [])):
        if sub in seen:
            continue
        seen.add(sub)
        out.append("  " * depth + describe(ix.symbols[sub]))
        _descendants(ix, sub, depth + 1, out, seen)


def type_hierarchy(ix: PyIndex, sym: Symbol) -> str:
    if sym.kind == "method" and sym.parent in ix.symbols:
        return _method_hierarchy(ix, sym)
    if sym.kind != "class":
        return f"{describe(sym)} is not a class or method: no type hierarchy"
    up: list[str] = []
    _ancestors(ix, sym.qname, 1, up, {sym.qname})
    down: list[str] = []
    _descendants(ix, sym.qname, 1, down, {sym.qname})
    lines = [describe(sym), "bases:", *(up or ["  (none)"]), "subclasses:", *(down or ["  (none)"])]
    return "\n".join(_cap(lines, "classes"))


def _same_method(ix: PyIndex, links: dict[str, list[str]], cls: str, name: str) -> list[str]:
    """The method `name` on the classes `links` reaches from `cls` (bases or subclasses), breadth
    first, each class once."""
    out: list[str] = []
    todo, seen = list(links.get(cls, [])), set()
    while todo:
        other = todo.pop(0)
        if other in seen:
            continue
        seen.add(other)
        found = ix.symbols.get(f"{other}.{name}")
        if found is not None:
            out.append("  " + describe(found))
        todo.extend(links.get(other, []))
    return out


def _method_hierarchy(ix: PyIndex, sym: Symbol) -> str:
    cls = sym.parent or ""
    lines = [describe(sym)]
    up = _same_method(ix, ix.bases, cls, sym.name)
    down = _same_method(ix, ix.subclasses, cls, sym.name)
    lines += ["overrides:", *(up or ["  (nothing)"]), "overridden by:", *(down or ["  (nothing)"])]
    return "\n".join(lines)


def _owned_by(qname: str, roots: set[str]) -> bool:
    return any(qname == r or qname.startswith(r + ".") for r in roots)


def blast_radius(ix: PyIndex, sym: Symbol) -> str:
    seeds = {sym.qname}
    frontier = [sym.qname, *(m.qname for m in ix.members(sym.qname) if m.kind in _MEMBER_KINDS)]
    reached: dict[str, int] = {}
    via: dict[str, Use] = {}
    depth = 0
    while frontier and depth < _MAX_DEPTH:
        depth += 1
        nxt: list[str] = []
        for target in frontier:
            for use in ix.references(target):
                if use.kind == "import":
                    continue
                owner = use.scope
                if owner in reached or _owned_by(owner, seeds) or owner not in ix.symbols:
                    continue
                reached[owner] = depth
                via[owner] = use
                if ix.symbols[owner].kind != "module":
                    nxt.append(owner)
        frontier = nxt
    lines = [describe(sym)]
    if not reached:
        lines.append("nothing in the workspace depends on it")
        return "\n".join(lines)
    files = sorted({ix.symbols[q].file for q in reached})
    lines.append(f"{len(reached)} dependents in {len(files)} files:")
    body: list[str] = []
    for level in range(1, depth + 1):
        at_level = sorted(q for q, d in reached.items() if d == level)
        if not at_level:
            continue
        body.append(f"depth {level}:")
        for q in at_level:
            use = via[q]
            body.append(f"  {describe(ix.symbols[q])}  (uses it at {use.file}:{use.line})")
    lines += _cap(body, "dependents")
    lines.append("files: " + ", ".join(files))
    return "\n".join(lines)


def get_symbol(ix: PyIndex, sym: Symbol, workspace: Path) -> str:
    try:
        text = (workspace / sym.file).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"cannot read {sym.file}: {exc.strerror or exc}"
    lines = text.splitlines()
    chunk = lines[sym.start - 1 : sym.end]
    body = "\n".join(f"{n:6d}\t{line}" for n, line in enumerate(chunk, start=sym.start))
    return f"{sym.qname} ({sym.kind}) {sym.file}:{sym.start}-{sym.end}\n{body}"


def search(ix: PyIndex, query: str, limit: int = 50) -> str:
    q = query.lower()
    ranked: list[tuple[int, str, Symbol]] = []
    for sym in ix.symbols.values():
        rank = match_rank(q, sym.name, sym.qname)
        if rank is None:
            continue
        ranked.append((rank, sym.qname, sym))
    ranked.sort(key=lambda t: (t[0], len(t[1]), t[1]))
    if not ranked:
        return f"no symbol matches {query!r}"
    lines = [
        f"{len(ranked)} symbols match {query!r}"
        + (f" (first {limit})" if len(ranked) > limit else "")
    ]
    for _rank, _q, sym in ranked[:limit]:
        sig = f"  {sym.signature}" if sym.kind in ("function", "method", "class") else ""
        lines.append(f"{describe(sym)}{sig}")
    return "\n".join(lines)


def _module_outline(ix: PyIndex, module: Symbol) -> list[str]:
    out = [f"{module.qname} ({module.file})" + (f" — {module.doc}" if module.doc else "")]
    for sym in ix.members(module.qname):
        depth = sym.qname.count(".") - module.qname.count(".")
        if sym.kind in ("variable", "attribute") or depth > 2:
            continue
        if sym.kind == "function" and depth > 1:
            continue  # nested helpers
        indent = "  " * depth
        out.append(f"{indent}{sym.signature}  [{sym.line}]")
    return out


def overview(ix: PyIndex, scope: Symbol | None, file: str | None) -> str:
    if file is not None:
        modules = [s for s in ix.symbols.values() if s.kind == "module" and s.file == file]
    elif scope is not None and scope.kind == "module":
        modules = [
            s
            for s in ix.symbols.values()
            if s.kind == "module"
            and (s.qname == scope.qname or s.qname.startswith(scope.qname + "."))
        ]
    elif scope is not None:
        outline = [describe(scope)] + ([f"  {scope.signature}"] if scope.signature else [])
        for m in ix.members(scope.qname):
            if m.kind in ("method", "class", "attribute"):
                outline.append(f"  {m.signature}  [{m.line}]")
        return "\n".join(_cap(outline, "lines"))
    else:
        modules = []
    if file is None and scope is None:
        rows = []
        for mod in sorted(
            (s for s in ix.symbols.values() if s.kind == "module"), key=lambda s: s.qname
        ):
            members = ix.members(mod.qname)
            classes = sum(1 for m in members if m.kind == "class")
            funcs = sum(1 for m in members if m.kind in ("function", "method"))
            doc = f" — {mod.doc}" if mod.doc else ""
            rows.append(f"{mod.qname} ({mod.file}): {classes} classes, {funcs} functions{doc}")
        head = f"{len(rows)} modules (give symbol or file_path for signatures):"
        return "\n".join([head, *_cap(rows, "modules")])
    lines: list[str] = []
    for mod in sorted(modules, key=lambda s: s.qname):
        lines += _module_outline(ix, mod)
    return "\n".join(_cap(lines, "lines")) if lines else "no Python module there"
