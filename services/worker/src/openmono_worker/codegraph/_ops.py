"""The CodeIntel operations over the graph, each rendering text for the model.

Locations are `file:line:col` (1-based line and column, workspace-relative), so results can be
followed up with FileRead. Every answer about uses says how sure it is: uses reached through an
import, an include or the same package are listed as such; uses in files that only share the
name (nothing links them to the definition) come after, as "possibly". Two definitions of one
name in the same file cannot be told apart by their uses (no types): both get them.
"""

from __future__ import annotations

from collections import defaultdict

from openmono_worker.codegraph._graph import CodeGraph
from openmono_worker.codegraph._locate import Use, uses
from openmono_worker.codegraph._tags import Def

_MAX_LINES = 200
_MAX_POSSIBLE = 40
_MAX_DEPTH = 4
_MAX_DEPENDENTS = 150
# a use on a line like these only binds a name: not a dependency (as in the Python index)
_IMPORT_LINES = (
    "import ",
    "from ",
    "use ",
    "#include",
    "require",
    "using ",
    "export {",
    "export *",
)

Target = tuple[str, Def]


def describe(rel: str, d: Def) -> str:
    return f"{d.qname} ({d.kind}) {rel}:{d.line}"


def _cap(lines: list[str], what: str, limit: int = _MAX_LINES) -> list[str]:
    if len(lines) <= limit:
        return lines
    return [*lines[:limit], f"... {len(lines) - limit} more {what}"]


def _where(rel: str, u: Use) -> str:
    scope = u.scope.qname if u.scope is not None else "(top level)"
    kind = "call" if u.call else "doc" if u.doc else "use"
    return f"{rel}:{u.line}:{u.col + 1} {kind} in {scope}: {u.text[:120]}"


def linked(graph: CodeGraph, target: Target) -> tuple[list[str], list[str]]:
    """Files whose uses of the name mean this definition: through imports, and by name only."""
    rel, d = target
    sure: list[str] = [rel]
    maybe: list[str] = []
    for f in sorted(graph.refs_by_name.get(d.name, ())):
        if f == rel:
            continue
        files, confidence = graph.resolve(f, d.name)
        if rel in files:
            (sure if confidence == "import" else maybe).append(f)
    return sure, maybe


def _uses_of(
    graph: CodeGraph, target: Target, cache: dict[tuple[str, str], list[Use]]
) -> tuple[list[tuple[str, Use]], list[tuple[str, Use]]]:
    sure_files, maybe_files = linked(graph, target)
    name = target[1].name

    def of(f: str) -> list[tuple[str, Use]]:
        key = (f, name)
        if key not in cache:
            cache[key] = uses(graph, f, {name})
        return [(f, u) for u in cache[key]]

    sure = [x for f in sure_files for x in of(f)]
    maybe = [x for f in maybe_files for x in of(f)]
    return sure, maybe


def find_references(graph: CodeGraph, target: Target) -> str:
    sure, maybe = _uses_of(graph, target, {})
    rel, d = target
    files = sorted({f for f, _u in sure})
    lines = [describe(rel, d), f"{len(sure)} references in {len(files)} files (linked by imports):"]
    lines += _cap([_where(f, u) for f, u in sure], "references")
    if maybe:
        lines.append(f"possibly ({len(maybe)}, in files that only share the name {d.name!r}):")
        lines += _cap([f"  {_where(f, u)}" for f, u in maybe], "possible uses", _MAX_POSSIBLE)
    return "\n".join(lines)


def callers(graph: CodeGraph, target: Target) -> str:
    sure, maybe = _uses_of(graph, target, {})
    rel, d = target

    def group(found: list[tuple[str, Use]]) -> list[str]:
        by_scope: dict[tuple[str, str], list[int]] = defaultdict(list)
        for f, u in found:
            if u.call:
                scope = describe(f, u.scope) if u.scope is not None else f"{f} (top level)"
                by_scope[(scope, f)].append(u.line)
        return [
            f"{scope}  calls at {', '.join(f'{f}:{n}' for n in lines)}"
            for (scope, f), lines in sorted(by_scope.items())
        ]

    body = group(sure)
    lines = [describe(rel, d), f"{len(body)} callers (linked by imports):", *_cap(body, "callers")]
    possible = group(maybe)
    if possible:
        lines.append(f"possibly ({len(possible)}, only sharing the name {d.name!r}):")
        lines += [f"  {x}" for x in possible[:_MAX_POSSIBLE]]
    return "\n".join(lines)


def callees(graph: CodeGraph, target: Target) -> str:
    rel, d = target
    own = {x.name: x for x in graph.tags[rel].defs}
    seen: dict[str, list[int]] = defaultdict(list)
    out: dict[str, str] = {}
    for u in uses(graph, rel, None, (d.start, d.end)):
        if not u.call or (u.name == d.name and u.line == d.line):
            continue
        if u.name in own:
            out[u.name] = f"{describe(rel, own[u.name])} (same file)"
        else:
            files, confidence = graph.resolve(rel, u.name)
            if not files:
                continue
            where = []
            for f in files:
                for x in graph.tags[f].defs:
                    if x.name == u.name:
                        where.append(describe(f, x))
            how = "import" if confidence == "import" else "name match only"
            out[u.name] = f"{'; '.join(where[:3])} ({how})"
        seen[u.name].append(u.line)
    lines = [describe(rel, d), f"{len(out)} functions it calls that the workspace defines:"]
    body = [
        f"{name} at line {', '.join(map(str, seen[name]))} -> {what}"
        for name, what in sorted(out.items())
    ]
    return "\n".join([*lines, *_cap(body, "callees")])


def blast_radius(graph: CodeGraph, target: Target) -> str:
    cache: dict[tuple[str, str], list[Use]] = {}
    rel, d = target
    reached: dict[tuple[str, str], tuple[int, str, Def | None, Use]] = {}
    frontier: list[Target] = [target]
    roots = {(rel, d.qname)}
    possible = 0
    depth = 0
    while frontier and depth < _MAX_DEPTH and len(reached) < _MAX_DEPENDENTS:
        depth += 1
        nxt: list[Target] = []
        for t in frontier:
            sure, maybe = _uses_of(graph, t, cache)
            possible += len(maybe) if depth == 1 else 0
            for f, u in sure:
                owner = u.scope
                if u.doc or (owner is None and u.text.startswith(_IMPORT_LINES)):
                    continue  # documentation and imports alone do not depend on it
                key = (f, owner.qname if owner is not None else "")
                if key in reached or key in roots:
                    continue
                if owner is not None and (f, t[1].qname) == key:
                    continue
                reached[key] = (depth, f, owner, u)
                if owner is not None:
                    nxt.append((f, owner))
        frontier = nxt
    lines = [describe(rel, d)]
    if not reached:
        lines.append("nothing in the workspace depends on it (through imports)")
    else:
        files = sorted({f for _dep, f, _o, _u in reached.values()})
        lines.append(f"{len(reached)} dependents in {len(files)} files:")
        body: list[str] = []
        for level in range(1, depth + 1):
            at = sorted((k, v) for k, v in reached.items() if v[0] == level)
            if not at:
                continue
            body.append(f"depth {level}:")
            for (_f, _q), (_l, f, owner, u) in at:
                who = describe(f, owner) if owner is not None else f"{f} (top level)"
                body.append(f"  {who}  (uses it at {f}:{u.line})")
        lines += _cap(body, "dependents")
        lines.append("files: " + ", ".join(files))
    if possible:
        lines.append(
            f"(and {possible} uses in files that only share the name: see find-references)"
        )
    return "\n".join(lines)


def definition(found: list[Target]) -> str:
    lines = [f"{len(found)} definition{'s' if len(found) != 1 else ''}:"]
    lines += [f"{describe(rel, d)}  {d.signature}" for rel, d in found]
    return "\n".join(_cap(lines, "definitions"))


def get_symbol(graph: CodeGraph, target: Target) -> str:
    rel, d = target
    try:
        text = (graph.workspace / rel).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"cannot read {rel}: {exc.strerror or exc}"
    chunk = text.splitlines()[d.start - 1 : d.end]
    body = "\n".join(f"{n:6d}\t{line}" for n, line in enumerate(chunk, start=d.start))
    return f"{d.qname} ({d.kind}) {rel}:{d.start}-{d.end}\n{body}"


def search(
    graph: CodeGraph, query: str, limit: int = 50, skip_lang: str | None = None
) -> list[str]:
    q = query.lower()
    ranked: list[tuple[int, int, str, str]] = []
    for rel, d in graph.defs():
        if skip_lang is not None and graph.tags[rel].lang == skip_lang:
            continue
        rank = match_rank(q, d.name, d.qname)
        if rank is None:
            continue
        ranked.append((rank, len(d.qname), rel, f"{describe(rel, d)}  {d.signature}"))
    ranked.sort()
    return [line for *_k, line in ranked[:limit]] + (
        [f"... {len(ranked) - limit} more"] if len(ranked) > limit else []
    )


def match_rank(query: str, name: str, qname: str) -> int | None:
    """How well a symbol matches a lower-cased search: 0 exact, 1 prefix, 2 part of the name,
    3 part of the qualified name (a dotted query); None: no match."""
    name, qname = name.lower(), qname.lower()
    if query in (name, qname):
        return 0
    if name.startswith(query):
        return 1
    if query in name:
        return 2
    if "." in query and query in qname:
        return 3
    return None


def outline(graph: CodeGraph, rel: str) -> str:
    t = graph.tags[rel]
    lines = [f"{rel} ({t.lang}): {len(t.defs)} definitions"]
    for d in t.defs:
        depth = len(d.parent.split(".")) if d.parent else 0
        lines.append(f"{'  ' * depth}{d.signature}  [{d.line}]")
    return "\n".join(_cap(lines, "lines"))


def overview(graph: CodeGraph, skip_lang: str | None = None) -> list[str]:
    """One line per file (of the languages shown): definitions by kind."""
    rows = []
    for rel, t in graph.tags.items():
        if skip_lang is not None and t.lang == skip_lang:
            continue
        kinds: dict[str, int] = defaultdict(int)
        for d in t.defs:
            kinds[d.kind] += 1
        counts = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        rows.append(f"{rel} ({t.lang}): {counts or 'no definitions'}")
    return rows
