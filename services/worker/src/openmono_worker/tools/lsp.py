"""Lsp: ask the file's language server (hover, definition, references, symbols, diagnostics).

Read-only. The server runs where this tool runs (the worker, or in the agent process), one per
workspace and language, kept warm between calls and restarted if it died. The file is synced from
disk before each question, so answers are about what is on disk now. `line` and `character` are
1-based, as editors show them. Locations outside the workspace (the standard library, installed
packages) are shown as absolute paths: they are facts about the code, and reading them still goes
through FileRead's own confinement.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pydantic import BaseModel, ConfigDict, Field

from openmono_worker.codeintel import (
    LanguageServer,
    Lines,
    ServerFailed,
    format_diagnostic,
    from_utf16,
    one_line,
    server_for,
    to_utf16,
)
from openmono_worker.errors import ToolError
from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome

Action = Literal["hover", "definition", "references", "symbols", "diagnostics"]
_MAX_LOCATIONS = 200
_MAX_HOVER_CHARS = 4000
_NEEDS_POSITION = ("hover", "definition", "references")
_FUNCTION_KINDS = (lsp.SymbolKind.Function, lsp.SymbolKind.Method, lsp.SymbolKind.Constructor)


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Action
    file_path: str = Field(min_length=1, description="File in the workspace.")
    line: int | None = Field(default=None, ge=1)
    character: int | None = Field(default=None, ge=1)


def _uri_path(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


class Lsp(Tool[Params]):
    name = "Lsp"
    description = (
        "Ask the file's language server: hover (type, docs), definition, references at "
        "line/character (1-based); symbols (outline) or diagnostics of the file."
    )
    read_only = True
    concurrency_safe = True
    path_params = ("file_path",)
    kind = "read"
    code = True
    params_model = Params

    def execute(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        path = ctx.resolve(params.file_path)
        shown = ctx.show(path)
        if not path.is_file():
            raise ToolError(f"file not found: {shown}")
        if params.action in _NEEDS_POSITION and (params.line is None or params.character is None):
            raise ToolError(f"{params.action} needs line and character (both 1-based)")
        server = server_for(
            ctx.workspace, path, shown, trusted=ctx.trusted, data_dir=ctx.settings.data_dir
        )
        timeout = min(ctx.timeout_s, ctx.settings.codeintel.request_timeout_s)
        try:
            return self._ask(server, params, path, shown, ctx, timeout)
        except ServerFailed:
            if server.alive():
                raise
            return self._ask(server, params, path, shown, ctx, timeout)  # restarted once

    def _ask(
        self,
        server: LanguageServer,
        params: Params,
        path: Path,
        shown: str,
        ctx: ToolContext,
        timeout: float,
    ) -> ToolOutcome:
        version = server.sync_from_disk(path)
        ctx.check_cancelled()
        lines = Lines()
        doc = lsp.TextDocumentIdentifier(uri=path.as_uri())
        if params.action == "diagnostics":
            found = server.diagnostics(path, version, timeout)
            if found is None:
                raise ToolError(f"no diagnostics for {shown} within {timeout:g} s")
            items = [d for d in found.items if d.severity != lsp.DiagnosticSeverity.Hint]
            if not items:
                return ToolOutcome(f"{shown}: no errors or warnings")
            body = "\n".join(format_diagnostic(shown, d) for d in items)
            return ToolOutcome(f"{shown}: {len(items)} diagnostics\n{body}")
        if params.action == "symbols":
            result = server.request(
                lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
                lsp.DocumentSymbolParams(text_document=doc),
                timeout,
            )
            return ToolOutcome(self._symbols(result or [], shown, ctx))
        assert params.line is not None and params.character is not None
        row = params.line - 1
        text_line = lines.line(path, row)
        pos = lsp.Position(line=row, character=to_utf16(text_line, params.character - 1))
        where = f"{shown}:{params.line}:{params.character}"
        if params.action == "hover":
            hover = server.request(
                lsp.TEXT_DOCUMENT_HOVER,
                lsp.HoverParams(text_document=doc, position=pos),
                timeout,
            )
            text = _hover_text(hover)
            return ToolOutcome(text[:_MAX_HOVER_CHARS] if text else f"nothing to show at {where}")
        if params.action == "definition":
            found_defs = server.request(
                lsp.TEXT_DOCUMENT_DEFINITION,
                lsp.DefinitionParams(text_document=doc, position=pos),
                timeout,
            )
            locations = _locations(found_defs)
            if not locations:
                return ToolOutcome(f"no definition found for {where}")
            return ToolOutcome(self._list(locations, ctx, lines, "definition"))
        refs = server.request(
            lsp.TEXT_DOCUMENT_REFERENCES,
            lsp.ReferenceParams(
                text_document=doc,
                position=pos,
                context=lsp.ReferenceContext(include_declaration=True),
            ),
            timeout,
        )
        locations = _locations(refs)
        if not locations:
            return ToolOutcome(f"no references found for {where}")
        return ToolOutcome(self._list(locations, ctx, lines, "reference"))

    @staticmethod
    def _list(locations: list[lsp.Location], ctx: ToolContext, lines: Lines, what: str) -> str:
        out = []
        ordered = sorted(locations, key=lambda loc: (loc.uri, loc.range.start.line))
        for loc in ordered[:_MAX_LOCATIONS]:
            target = _uri_path(loc.uri)
            row = loc.range.start.line
            try:  # the source line only where FileRead could read it too
                ctx.resolve(str(target), read=True)
                source = lines.line(target, row)
            except ToolError:
                source = ""
            col = from_utf16(source, loc.range.start.character) + 1
            text = f": {one_line(source.strip(), 160)}" if source else ""
            out.append(f"{ctx.show(target)}:{row + 1}:{col}{text}")
        head = f"{len(locations)} {what}{'s' if len(locations) != 1 else ''}"
        if len(locations) > _MAX_LOCATIONS:
            head += f" (first {_MAX_LOCATIONS} shown)"
        return head + "\n" + "\n".join(out)

    @staticmethod
    def _symbols(result: list[Any], shown: str, ctx: ToolContext) -> str:
        out: list[str] = []

        def walk(items: Sequence[Any], depth: int, in_function: bool) -> None:
            for item in items:
                kind = lsp.SymbolKind(item.kind)
                if in_function and kind == lsp.SymbolKind.Variable:
                    continue  # a function's locals and parameters are noise in an outline
                name = kind.name.lower()
                if isinstance(item, lsp.DocumentSymbol):
                    start, end = item.range.start.line + 1, item.range.end.line + 1
                    detail = f" {one_line(item.detail, 120)}" if item.detail else ""
                    out.append(f"{'  ' * depth}{name} {item.name}{detail}  [{start}-{end}]")
                    inner = in_function or kind in _FUNCTION_KINDS
                    walk(item.children or [], depth + 1, inner)
                else:  # SymbolInformation (flat)
                    line = item.location.range.start.line + 1
                    out.append(f"{'  ' * depth}{name} {item.name}  [{line}]")

        walk(result, 0, False)
        return f"{shown}: {len(out)} symbols\n" + "\n".join(out) if out else f"{shown}: no symbols"


def _hover_text(hover: lsp.Hover | None) -> str:
    if hover is None:
        return ""
    contents: Any = hover.contents
    parts = list(contents) if isinstance(contents, list | tuple) else [contents]
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        else:  # MarkupContent or MarkedString {language, value}
            texts.append(str(getattr(part, "value", "")))
    return "\n".join(t.strip() for t in texts if t.strip())


def _locations(result: Any) -> list[lsp.Location]:
    if result is None:
        return []
    items = list(result) if isinstance(result, list | tuple) else [result]
    out = []
    for item in items:
        if isinstance(item, lsp.Location):
            out.append(item)
        elif isinstance(item, lsp.LocationLink):
            out.append(lsp.Location(uri=item.target_uri, range=item.target_selection_range))
    return out


TOOL = Lsp()
