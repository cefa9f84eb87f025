"""How code-intelligence results read for the model: `path:line:col` (1-based) and short text."""

from __future__ import annotations

from lsprotocol import types as lsp

_SEVERITY = {
    lsp.DiagnosticSeverity.Error: "error",
    lsp.DiagnosticSeverity.Warning: "warning",
    lsp.DiagnosticSeverity.Information: "info",
    lsp.DiagnosticSeverity.Hint: "hint",
}


def severity_name(d: lsp.Diagnostic) -> str:
    return _SEVERITY.get(d.severity or lsp.DiagnosticSeverity.Error, "error")


def one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.replace("\xa0", " ").split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def format_diagnostic(shown: str, d: lsp.Diagnostic) -> str:
    """`path:line:col severity: message (code)`, positions 1-based."""
    start = d.range.start
    code = f" ({d.code})" if d.code else ""
    where = f"{shown}:{start.line + 1}:{start.character + 1}"
    return f"{where} {severity_name(d)}: {one_line(d.message)}{code}"
