"""Code intelligence where the workspace is: language servers, post-edit diagnostics, an index.

    server_for(workspace, path, shown)  the warm language server for a file's language
    stop_servers(workspace=None)        stop them (the executor calls it when it closes)
    edit_diagnostics(workspace, paths)  the hook FileWrite/FileEdit/ApplyPatch wrap their write in

The `Lsp` and `CodeIntel` tools (in `openmono_worker.tools`) are built on these. Errors:
`CodeIntelError` and its subclasses (see `_errors.py`), all `ToolError`s.
"""

from openmono_worker.codeintel._edits import EditCheck, edit_diagnostics, new_errors
from openmono_worker.codeintel._errors import (
    CodeIntelError,
    NoServer,
    RequestTimedOut,
    ServerFailed,
)
from openmono_worker.codeintel._languages import LANGUAGES, Language, language_of
from openmono_worker.codeintel._pool import running_servers, server_for, stop_servers
from openmono_worker.codeintel._server import Diagnostics, LanguageServer
from openmono_worker.codeintel._settings import CodeIntelSettings, codeintel_settings

__all__ = [
    "LANGUAGES",
    "CodeIntelError",
    "CodeIntelSettings",
    "Diagnostics",
    "EditCheck",
    "Language",
    "LanguageServer",
    "NoServer",
    "RequestTimedOut",
    "ServerFailed",
    "codeintel_settings",
    "edit_diagnostics",
    "language_of",
    "new_errors",
    "running_servers",
    "server_for",
    "stop_servers",
]
