"""Code intelligence where the workspace is: language servers, post-edit diagnostics, an index.

    server_for(workspace, path, shown)  the warm language server for a file's language
    stop_servers(workspace=None)        stop them (the local executor does when it closes)
    edit_diagnostics(workspace, paths)  the hook FileWrite/FileEdit/ApplyPatch wrap their write in
    install(data_dir, item), remove     language servers from npm, into the data dir (the user's)
    index_for(workspace)                the Python index (symbols, resolved references)
    find_references, callers, ...       the CodeIntel operations, rendering text
    file_findings, workspace_findings   basedpyright diagnostics (server / CLI); baselines

The `Lsp` and `CodeIntel` tools (in `openmono_worker.tools`) are built on these. Errors:
`CodeIntelError` and its subclasses (see `_errors.py`), all `ToolError`s.
"""

from openmono_worker.codeintel._baseline import compare, load_baseline, save_baseline
from openmono_worker.codeintel._edits import EditCheck, edit_diagnostics, new_errors
from openmono_worker.codeintel._errors import (
    CodeIntelError,
    NeedsTrust,
    NoServer,
    RequestTimedOut,
    ServerFailed,
)
from openmono_worker.codeintel._format import format_diagnostic, one_line
from openmono_worker.codeintel._install import (
    INSTALLABLE,
    Installable,
    InstallFailed,
    for_language,
    install,
    installable,
    is_installed,
    remove,
)
from openmono_worker.codeintel._languages import (
    LANGUAGES,
    READS_ONLY,
    Language,
    ProjectCode,
    language_of,
)
from openmono_worker.codeintel._pool import running_servers, server_for, stop_servers
from openmono_worker.codeintel._positions import Lines, from_utf16, to_utf16
from openmono_worker.codeintel._pycheck import Finding, file_findings, workspace_findings
from openmono_worker.codeintel._pyindex import PyIndex, Use, module_name
from openmono_worker.codeintel._pyqueries import (
    blast_radius,
    callers,
    find_references,
    get_symbol,
    overview,
    search,
    type_hierarchy,
)
from openmono_worker.codeintel._pyscan import FileFacts, Symbol, scan_source
from openmono_worker.codeintel._pystore import forget_indexes, index_for, save_index
from openmono_worker.codeintel._server import Diagnostics, LanguageServer
from openmono_worker.settings import CodeIntelSettings, codeintel_settings

__all__ = [
    "INSTALLABLE",
    "LANGUAGES",
    "READS_ONLY",
    "CodeIntelError",
    "CodeIntelSettings",
    "Diagnostics",
    "EditCheck",
    "FileFacts",
    "Finding",
    "InstallFailed",
    "Installable",
    "Language",
    "LanguageServer",
    "Lines",
    "NeedsTrust",
    "NoServer",
    "ProjectCode",
    "PyIndex",
    "RequestTimedOut",
    "ServerFailed",
    "Symbol",
    "Use",
    "blast_radius",
    "callers",
    "codeintel_settings",
    "compare",
    "edit_diagnostics",
    "file_findings",
    "find_references",
    "for_language",
    "forget_indexes",
    "format_diagnostic",
    "from_utf16",
    "get_symbol",
    "index_for",
    "install",
    "installable",
    "is_installed",
    "language_of",
    "load_baseline",
    "module_name",
    "new_errors",
    "one_line",
    "overview",
    "remove",
    "running_servers",
    "save_baseline",
    "save_index",
    "scan_source",
    "search",
    "server_for",
    "stop_servers",
    "to_utf16",
    "type_hierarchy",
    "workspace_findings",
]
