"""Diagnostics of Python code: one file through the warm server, the workspace through the CLI.

One file: the language server's published diagnostics (seconds when cold, well under one when
warm), plus the index's syntax error when no server is there. The whole workspace: basedpyright's
command line (`--outputjson`) once over every file, in its own process group, killed at the
deadline or on cancel. A workspace with its own pyright configuration is checked with it;
otherwise with the same "standard" rules the server uses.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types as lsp

from openmono_worker.codeintel._errors import (
    CodeIntelError,
    NeedsTrust,
    RequestTimedOut,
    ServerFailed,
)
from openmono_worker.codeintel._format import one_line, severity_name
from openmono_worker.codeintel._languages import LANGUAGES
from openmono_worker.codeintel._pool import server_for

_SEVERITIES = {"error": "error", "warning": "warning", "information": "info"}


@dataclass(frozen=True, order=True)
class Finding:
    """One diagnostic as the code tools compare and show it (line-agnostic `key`)."""

    file: str
    line: int
    col: int
    severity: str
    message: str
    code: str = ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.file, self.severity, self.code, self.message)

    def show(self) -> str:
        code = f" ({self.code})" if self.code else ""
        return f"{self.file}:{self.line}:{self.col} {self.severity}: {self.message}{code}"


def file_findings(
    workspace: Path, path: Path, shown: str, timeout_s: float, *, trusted: bool
) -> list[Finding]:
    """Errors and warnings of one file from the language server."""
    server = server_for(workspace, path, shown, trusted=trusted)
    version = server.sync_from_disk(path)
    found = server.diagnostics(path, version, timeout_s)
    if found is None:
        raise RequestTimedOut(f"no diagnostics for {shown} within {timeout_s:g} s")
    out = []
    for d in found.items:
        if d.severity in (lsp.DiagnosticSeverity.Hint, lsp.DiagnosticSeverity.Information):
            continue
        start = d.range.start
        out.append(
            Finding(
                shown,
                start.line + 1,
                start.character + 1,
                severity_name(d),
                one_line(d.message),
                str(d.code or ""),
            )
        )
    return sorted(out)


def _has_pyright_config(workspace: Path) -> bool:
    if (workspace / "pyrightconfig.json").is_file():
        return True
    pyproject = workspace / "pyproject.toml"
    with contextlib.suppress(OSError):
        text = pyproject.read_text(encoding="utf-8", errors="replace")
        return "[tool.pyright" in text or "[tool.basedpyright" in text
    return False


def workspace_findings(
    workspace: Path, timeout_s: float, cancel: threading.Event | None = None, *, trusted: bool
) -> list[Finding]:
    """Errors and warnings of every Python file in the workspace (basedpyright CLI; it runs the
    workspace's code as its language server does, so the same trust applies)."""
    python = LANGUAGES[0]
    if not trusted and python.project_code.runs_in(workspace):
        raise NeedsTrust(
            f"no workspace diagnostics: {python.project_code.why}, so it runs only in a "
            "workspace the user trusted (`openmono config trust` in the workspace)"
        )
    exe = python.executable()
    if exe is None:
        raise CodeIntelError("basedpyright is not installed here")
    cli = str(Path(exe).with_name("basedpyright"))
    with tempfile.TemporaryDirectory(prefix="codeintel-") as tmp:
        argv = [cli, "--outputjson"]
        if not _has_pyright_config(workspace):
            config = Path(tmp) / "pyrightconfig.json"
            venv = workspace / ".venv"
            settings: dict[str, object] = {
                "include": [str(workspace)],
                # imports resolve from the workspace (and a src/ layout), not from this temp dir
                "executionEnvironments": [
                    {"root": str(workspace), "extraPaths": [str(workspace / "src")]}
                ],
                "exclude": ["**/node_modules", "**/__pycache__", "**/.*"],
                "typeCheckingMode": "standard",
            }
            if venv.is_dir():
                settings.update(venvPath=str(workspace), venv=".venv")
            config.write_text(json.dumps(settings))
            argv += ["-p", str(config)]
        proc = subprocess.Popen(
            argv,
            cwd=workspace,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout_s
        try:
            while True:
                try:
                    out, _ = proc.communicate(timeout=0.25)
                    break
                except subprocess.TimeoutExpired:
                    if time.monotonic() > deadline:
                        raise RequestTimedOut(
                            f"checking the workspace took over {timeout_s:g} s; "
                            "give a file_path to check one file"
                        ) from None
                    if cancel is not None and cancel.is_set():
                        raise CodeIntelError("cancelled") from None
        finally:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    try:
        report = json.loads(out)
    except ValueError as exc:
        raise ServerFailed(f"basedpyright gave no JSON report (exit {proc.returncode})") from exc
    found = []
    for item in report.get("generalDiagnostics", []):
        severity = _SEVERITIES.get(item.get("severity", ""), "")
        if severity not in ("error", "warning"):
            continue
        start = item.get("range", {}).get("start", {})
        path = item.get("file", "")
        rel = os.path.relpath(path, workspace) if path.startswith(str(workspace)) else path
        found.append(
            Finding(
                rel,
                int(start.get("line", 0)) + 1,
                int(start.get("character", 0)) + 1,
                severity,
                one_line(item.get("message", "")),
                str(item.get("rule", "")),
            )
        )
    return sorted(found)
