"""CodeIntel: what the code defines and what depends on what, from workspace indexes.

Read-only. Python has the deeper index (`openmono_worker.codeintel`: `ast`, resolved through
imports, re-exports, `self` and base classes) and basedpyright's diagnostics; every language the
code graph reads (`openmono_worker.codegraph`: tree-sitter, 12 languages) is answered from the
graph, and Python falls back to it where its index has nothing. Both are built on the first call,
kept per workspace in the process that runs the tool with a copy in the data dir, and re-read
only what changed on disk before each call, so after an edit the answer is about the code as it
is now. `capture-baseline` stores diagnostics so later `diagnostics` calls report the change.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from openmono_worker.codeintel import (
    Finding,
    PyIndex,
    Symbol,
    blast_radius,
    callers,
    compare,
    file_findings,
    find_references,
    get_symbol,
    index_for,
    load_baseline,
    overview,
    save_baseline,
    save_index,
    search,
    type_hierarchy,
    workspace_findings,
)
from openmono_worker.errors import ToolError
from openmono_worker.tools import _graph_intel
from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome

Operation = Literal[
    "overview",
    "definition",
    "find-references",
    "callers",
    "callees",
    "type-hierarchy",
    "blast-radius",
    "get-symbol",
    "search",
    "diagnostics",
    "capture-baseline",
]
_NEEDS_SYMBOL = (
    "definition",
    "callees",
    "find-references",
    "callers",
    "type-hierarchy",
    "blast-radius",
    "get-symbol",
    "search",
)
_MAX_CANDIDATES = 20
_MAX_FINDINGS = 200


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    operation: Operation
    symbol: str | None = Field(
        default=None,
        description="Plain or dotted name (Class.method, pkg.mod.func); for search, part of one.",
    )
    file_path: str | None = Field(default=None, description="Limit to this file.")


class CodeIntel(Tool[Params]):
    name = "CodeIntel"
    description = (
        "Code intelligence from a workspace index, in Python, TypeScript/JavaScript, Go, Rust, "
        "Java, C/C++, C#, Ruby, PHP (answers as file:line; better than grep). overview: "
        "files, classes, signatures. definition, find-references, callers, callees, "
        "type-hierarchy (Python). blast-radius: what depends on symbol, transitively. "
        "get-symbol: its source. search: symbols by name. diagnostics (Python): type errors, "
        "only the change once capture-baseline recorded them."
    )
    read_only = True
    concurrency_safe = True
    path_params = ("file_path",)
    kind = "read"
    code = True
    params_model = Params

    def execute(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        file = None
        python = True
        if params.file_path is not None:
            path = ctx.resolve(params.file_path)
            if not path.is_file():
                raise ToolError(f"file not found: {ctx.show(path)}")
            file = ctx.show(path)
            python = path.suffix in (".py", ".pyi")
            if not python and not _graph_intel.reads(file):
                raise ToolError(f"{file} is not in a language CodeIntel reads")
        op = params.operation
        if op in _NEEDS_SYMBOL and not params.symbol:
            raise ToolError(f"{op} needs a symbol")
        if op in ("diagnostics", "capture-baseline"):
            if not python:
                raise ToolError(f"{op} is for Python; use Lsp diagnostics for {file}")
            return self._diagnostics(op, file, ctx)
        if not python:
            return ToolOutcome(_graph_intel.answer(op, params.symbol, file, ctx))
        cache_dir = ctx.settings.data_dir / "codeintel" / "index"
        index = index_for(ctx.workspace, cache_dir)
        with index.lock:
            if index.refresh(ctx.cancel):
                save_index(index, cache_dir)
            ctx.check_cancelled()
            if op == "search":
                found = search(index, params.symbol or "")
                return ToolOutcome(_graph_intel.add_search(found, params.symbol or "", file, ctx))
            if op == "overview" and not params.symbol:
                text = overview(index, None, file)
                return ToolOutcome(text if file else _graph_intel.add_overview(text, ctx))
            try:
                sym = self._one(index, params.symbol or "", file)
            except ToolError as missing:
                if "ambiguous" in str(missing):
                    raise
                # nothing in the Python index (not Python, or a file ast cannot read): the graph
                return ToolOutcome(
                    _graph_intel.answer(op, params.symbol, file, ctx, missing=str(missing))
                )
            if op == "overview":
                return ToolOutcome(overview(index, sym, file))
            if op == "definition":
                where = f"{sym.qname} ({sym.kind}) {sym.file}:{sym.line}"
                return ToolOutcome(f"1 definition:\n{where}  {sym.signature}")
            if op == "find-references":
                return ToolOutcome(find_references(index, sym))
            if op == "callers":
                return ToolOutcome(callers(index, sym))
            if op == "callees":
                return ToolOutcome(_graph_intel.answer(op, params.symbol, sym.file, ctx))
            if op == "type-hierarchy":
                return ToolOutcome(type_hierarchy(index, sym))
            if op == "blast-radius":
                return ToolOutcome(blast_radius(index, sym))
            return ToolOutcome(get_symbol(index, sym, ctx.workspace))

    @staticmethod
    def _one(index: PyIndex, symbol: str, file: str | None) -> Symbol:
        found = index.find(symbol, file)
        if not found:
            where = f" in {file}" if file else ""
            raise ToolError(
                f"no symbol {symbol!r}{where} in the index; try operation=search with part of it"
            )
        if len(found) > 1:
            shown = [f"  {s.qname} ({s.kind}) {s.file}:{s.line}" for s in found[:_MAX_CANDIDATES]]
            more = (
                f"\n  ... {len(found) - _MAX_CANDIDATES} more"
                if len(found) > _MAX_CANDIDATES
                else ""
            )
            raise ToolError(
                f"{symbol!r} is ambiguous ({len(found)} symbols); give the dotted name or a "
                "file_path:\n" + "\n".join(shown) + more
            )
        return found[0]

    def _diagnostics(self, op: str, file: str | None, ctx: ToolContext) -> ToolOutcome:
        settings = ctx.settings.codeintel
        if file is not None:
            timeout = min(ctx.timeout_s, settings.request_timeout_s)
            findings = file_findings(
                ctx.workspace, ctx.workspace / file, file, timeout, trusted=ctx.trusted
            )
            scope = file
        else:
            timeout = min(ctx.timeout_s, settings.check_timeout_s)
            findings = workspace_findings(ctx.workspace, timeout, ctx.cancel, trusted=ctx.trusted)
            scope = "(workspace)"
        errors = sum(1 for f in findings if f.severity == "error")
        counts = f"{errors} errors, {len(findings) - errors} warnings"
        data_dir = ctx.settings.data_dir
        if op == "capture-baseline":
            save_baseline(data_dir, ctx.session_id, ctx.workspace, scope, findings)
            return ToolOutcome(
                f"baseline captured for {scope}: {counts}; later diagnostics of it report only "
                "what changed"
            )
        baseline = load_baseline(data_dir, ctx.session_id, ctx.workspace, scope)
        if baseline is None:
            return ToolOutcome(f"{scope}: {counts}\n" + _listing(findings))
        new, fixed = compare(baseline, findings)
        head = f"{scope}: {counts}; since the baseline: {len(new)} new, {len(fixed)} fixed"
        parts = [head]
        if new:
            parts += ["new:", _listing(new)]
        if fixed:
            parts += ["fixed:", _listing(fixed)]
        return ToolOutcome("\n".join(parts))


def _listing(findings: list[Finding]) -> str:
    lines = [f.show() for f in findings[:_MAX_FINDINGS]]
    if len(findings) > _MAX_FINDINGS:
        lines.append(f"... {len(findings) - _MAX_FINDINGS} more")
    return "\n".join(lines)


TOOL = CodeIntel()
