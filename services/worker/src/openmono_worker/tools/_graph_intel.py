"""CodeIntel's answers from the code graph: every language it reads, and Python's fallback.

The graph of the workspace (`openmono_worker.codegraph`) is refreshed before each answer (a stat
walk; changed files re-read) and its disk copy kept in `<data dir>/codegraph/`.
"""

from __future__ import annotations

from openmono_worker import codegraph as ops
from openmono_worker.codegraph import CodeGraph, graph_for, save_graph, spec_for
from openmono_worker.errors import ToolError
from openmono_worker.tools._base import ToolContext

_MAX_CANDIDATES = 20
_MAX_FILES = 300


def reads(file: str) -> bool:
    return spec_for(file) is not None


def fresh_graph(ctx: ToolContext) -> CodeGraph:
    """The workspace's graph, brought up to date (the caller holds `graph.lock`)."""
    cache_dir = ctx.settings.data_dir / "codegraph"
    graph, _mapper = graph_for(ctx.workspace, cache_dir)
    return graph


def _refresh(graph: CodeGraph, ctx: ToolContext) -> None:
    if graph.refresh(ctx.cancel):
        save_graph(graph, ctx.settings.data_dir / "codegraph")
    ctx.check_cancelled()


def _one(graph: CodeGraph, symbol: str, file: str | None, missing: str | None) -> ops.Target:
    found = graph.find(symbol, file)
    if not found:
        where = f" in {file}" if file else ""
        raise ToolError(
            missing
            or f"no symbol {symbol!r}{where} in the index; try operation=search with part of it"
        )
    if len(found) > 1:
        shown = [f"  {ops.describe(rel, d)}" for rel, d in found[:_MAX_CANDIDATES]]
        more = (
            f"\n  ... {len(found) - _MAX_CANDIDATES} more" if len(found) > _MAX_CANDIDATES else ""
        )
        raise ToolError(
            f"{symbol!r} is ambiguous ({len(found)} symbols); give Class.method or a "
            "file_path:\n" + "\n".join(shown) + more
        )
    return found[0]


def answer(
    op: str, symbol: str | None, file: str | None, ctx: ToolContext, missing: str | None = None
) -> str:
    graph = fresh_graph(ctx)
    with graph.lock:
        _refresh(graph, ctx)
        if file is not None and file not in graph.tags:
            skipped = next((s.reason for s in graph.skipped if s.path == file), "")
            raise ToolError(
                f"{file} is not in the code graph" + (f": {skipped}" if skipped else "")
            )
        if op == "overview" and not symbol:
            if file is not None:
                return ops.outline(graph, file)
            rows = ops.overview(graph)
            head = f"{len(rows)} files (give file_path for an outline):"
            return "\n".join([head, *rows[:_MAX_FILES]])
        if op == "search":
            lines = ops.search(graph, symbol or "")
            if not lines:
                return f"no symbol matches {symbol!r}"
            return "\n".join([f"symbols matching {symbol!r}:", *lines])
        if op == "type-hierarchy":
            raise ToolError("type-hierarchy is answered for Python only")
        if op == "definition":
            found = graph.find(symbol or "", file)
            if not found:
                _one(graph, symbol or "", file, missing)
            return ops.definition(found)
        target = _one(graph, symbol or "", file, missing)
        if op == "overview":
            return ops.outline(graph, target[0])
        if op == "find-references":
            return ops.find_references(graph, target)
        if op == "callers":
            return ops.callers(graph, target)
        if op == "callees":
            return ops.callees(graph, target)
        if op == "blast-radius":
            return ops.blast_radius(graph, target)
        return ops.get_symbol(graph, target)


def add_search(python: str, query: str, file: str | None, ctx: ToolContext) -> str:
    """Python's search answer, then the other languages' matches."""
    if file is not None:
        return python
    graph = fresh_graph(ctx)
    with graph.lock:
        _refresh(graph, ctx)
        others = ops.search(graph, query, skip_lang="python")
    if not others:
        return python
    if python.startswith("no symbol matches"):
        return f"symbols matching {query!r}:\n" + "\n".join(others)
    return f"{python}\nin other languages:\n" + "\n".join(others)


def add_overview(python: str, ctx: ToolContext) -> str:
    graph = fresh_graph(ctx)
    with graph.lock:
        _refresh(graph, ctx)
        rows = ops.overview(graph, skip_lang="python")
    if not rows:
        return python
    return f"{python}\n{len(rows)} files in other languages:\n" + "\n".join(rows[:_MAX_FILES])
