"""OpenMono's hands: the tool implementations and the Celery app that runs them against a workspace.

Entry points: `run_tool(ToolRequest) -> ToolResult` (used in-process by the agent's local executor
and by the Celery task alike) and `tool_specs()` (what the agent advertises to the model). The agent
imports only the names listed in `__all__`: the tools (`get_tool`) for their facts and parameter
models, the workspace guard, the FileRead/FileWrite wording, the validation message format, what
the OS sandbox can do on this machine (`sandbox_support`), the language servers and those the
user installs from npm (`LANGUAGES`, `INSTALLABLE`, `install_server`, ...), and the Celery app
factory.

`create_app` and the language-server names are loaded on first use, so importing this package
imports neither Celery (the in-process default never needs it) nor the code-intelligence stack.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from openmono_worker.errors import CallCancelled, PathRefused, ToolError, WorkerError
from openmono_worker.formatting import READ_DEFAULT_LIMIT, read_page, write_summary
from openmono_worker.runner import format_validation_error, run_tool, tool_specs
from openmono_worker.sandbox import Support as SandboxSupport
from openmono_worker.sandbox import support as sandbox_support
from openmono_worker.settings import WebToolSettings, WorkerSettings
from openmono_worker.tools import Tool, get_tool, glob_match
from openmono_worker.workspace import display_path, names_path, resolve_path

if TYPE_CHECKING:
    from openmono_worker.celery_app import create_app
    from openmono_worker.codeintel import INSTALLABLE, LANGUAGES, InstallFailed, for_language
    from openmono_worker.codeintel import install as install_server
    from openmono_worker.codeintel import installable as installable_server
    from openmono_worker.codeintel import is_installed as server_installed
    from openmono_worker.codeintel import remove as remove_server

__all__ = [
    "INSTALLABLE",
    "LANGUAGES",
    "READ_DEFAULT_LIMIT",
    "CallCancelled",
    "InstallFailed",
    "PathRefused",
    "SandboxSupport",
    "Tool",
    "ToolError",
    "WebToolSettings",
    "WorkerError",
    "WorkerSettings",
    "create_app",
    "display_path",
    "for_language",
    "format_validation_error",
    "get_tool",
    "glob_match",
    "install_server",
    "installable_server",
    "names_path",
    "read_page",
    "remove_server",
    "resolve_path",
    "run_tool",
    "sandbox_support",
    "server_installed",
    "stop_language_servers",
    "tool_specs",
    "write_summary",
]

_LAZY = {"create_app"}
# name here -> name in openmono_worker.codeintel
_CODEINTEL = {
    "INSTALLABLE": "INSTALLABLE",
    "LANGUAGES": "LANGUAGES",
    "InstallFailed": "InstallFailed",
    "for_language": "for_language",
    "install_server": "install",
    "installable_server": "installable",
    "server_installed": "is_installed",
    "remove_server": "remove",
}


def stop_language_servers(workspace: str | os.PathLike[str] | None = None) -> int:
    """Stop the language servers this process started for the code tools (one workspace's, or
    all); returns how many were running. Imported late: most processes never start one."""
    from pathlib import Path

    from openmono_worker.codeintel import stop_servers

    return stop_servers(Path(os.path.realpath(workspace)) if workspace is not None else None)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from openmono_worker import celery_app

        return getattr(celery_app, name)
    if name in _CODEINTEL:
        from openmono_worker import codeintel

        return getattr(codeintel, _CODEINTEL[name])
    raise AttributeError(f"module 'openmono_worker' has no attribute {name!r}")
