"""Which language server serves which file: a table of languages, extensions and commands.

Python's server (basedpyright) is a dependency of the worker, so it sits next to the running
interpreter; every other server is used when its binary is on PATH or the user installed it into
the data dir (`openmono lsp install`, `_install.py`), and skipped otherwise. A server's
`settings` answer its `workspace/configuration` requests (by section).

Each language declares whether starting its server runs code the workspace brings
(`project_code`): such a server starts only in a workspace the user trusted (`require_language`,
`ToolRequest.workspace_trusted`), because the tools that start servers (Lsp, CodeIntel, the
diagnostics after an edit) run without asking. A language that declares nothing is treated as
running it.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openmono_worker.codeintel._errors import NeedsTrust, NoServer
from openmono_worker.codeintel._install import for_language, installed_binary
from openmono_worker.settings import WorkerSettings


@dataclass(frozen=True)
class ProjectCode:
    """Whether a language server runs code from the workspace it serves, and why."""

    # what runs (for the model and the user); None: the server only reads the files
    why: str | None
    # it runs only where one of these (workspace-relative) exists; empty: always
    when_present: tuple[str, ...] = ()

    def runs_in(self, workspace: Path) -> bool:
        if self.why is None:
            return False
        return not self.when_present or any((workspace / p).exists() for p in self.when_present)


READS_ONLY = ProjectCode(None)
UNDECLARED = ProjectCode("it does not declare whether it runs the workspace's code")


@dataclass(frozen=True)
class Language:
    """One language: its LSP id, file extensions and the server command (argv[0] is looked up)."""

    id: str
    extensions: tuple[str, ...]
    command: tuple[str, ...]
    # Answers to `workspace/configuration`, nested by section ("a.b" is settings["a"]["b"]).
    settings: dict[str, Any] = field(default_factory=dict)
    project_code: ProjectCode = UNDECLARED
    # other binaries that serve the language with the same arguments (pyright for basedpyright)
    alternatives: tuple[str, ...] = ()

    def executable(self, data_dir: Path | None = None) -> str | None:
        """The server binary's path (beside the interpreter, on PATH, then installed under
        `data_dir`, by default the worker's), or None when it is not installed here."""
        for name in (self.command[0], *self.alternatives):
            beside = Path(sys.executable).parent / name
            if beside.is_file() and os.access(beside, os.X_OK):
                return str(beside)
            found = shutil.which(name)
            if found is None:
                found = installed_binary(data_dir or WorkerSettings().data_dir, name)
            if found is not None:
                return found
        return None


# basedpyright's defaults ("recommended") flag every `Any`; "standard" keeps to real errors, and
# openFilesOnly keeps it from checking the whole workspace on start.
_PYRIGHT_ANALYSIS = {
    "typeCheckingMode": "standard",
    "diagnosticMode": "openFilesOnly",
    "autoSearchPaths": True,
    "useLibraryCodeForTypes": True,
}

# What each server runs of the workspace, checked against its source (typescript-language-server
# 4.3: `getWorkspaceVersion`; basedpyright 1.40: the `.venv` default of `_ensureDefaultOptions`).
LANGUAGES: tuple[Language, ...] = (
    Language(
        "python",
        (".py", ".pyi"),
        ("basedpyright-langserver", "--stdio"),
        {
            "basedpyright": {"analysis": _PYRIGHT_ANALYSIS},
            "python": {"analysis": _PYRIGHT_ANALYSIS},
        },
        # no interpreter configured: it runs <root>/.venv/bin/python to list the search paths
        ProjectCode(
            "basedpyright runs the workspace's .venv/bin/python to find its packages",
            (".venv/bin/python",),
        ),
        ("pyright-langserver",),
    ),
    Language(
        "typescript",
        (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"),
        ("typescript-language-server", "--stdio"),
        project_code=ProjectCode(
            "typescript-language-server runs the workspace's own TypeScript "
            "(node_modules/typescript) and the tsserver plugins its tsconfig names"
        ),
    ),
    Language(
        "go",
        (".go",),
        ("gopls",),
        project_code=ProjectCode(
            "gopls runs the go command, which may fetch and run the toolchain go.mod names"
        ),
    ),
    Language(
        "rust",
        (".rs",),
        ("rust-analyzer",),
        project_code=ProjectCode(
            "rust-analyzer builds the project: its build scripts (build.rs) and proc macros run"
        ),
    ),
    # clangd only parses (compile_commands.json names flags; no compiler runs without
    # --query-driver, which we never pass)
    Language(
        "c",
        (".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh"),
        ("clangd",),
        project_code=READS_ONLY,
    ),
    Language(
        "csharp",
        (".cs",),
        ("csharp-ls",),
        project_code=ProjectCode(
            "csharp-ls loads the project with MSBuild, which runs its targets"
        ),
    ),
    Language(
        "lua",
        (".lua",),
        ("lua-language-server",),
        project_code=ProjectCode(
            "lua-language-server runs the plugin scripts a workspace's .luarc.json names"
        ),
    ),
    # it reads scripts and runs shellcheck over them, never the scripts themselves
    Language(
        "shellscript", (".sh", ".bash"), ("bash-language-server", "start"), project_code=READS_ONLY
    ),
)

_BY_EXTENSION = {ext: lang for lang in LANGUAGES for ext in lang.extensions}


def language_of(path: Path) -> Language | None:
    """The language of a file by its extension, or None for one we have no server for."""
    return _BY_EXTENSION.get(path.suffix.lower())


def require_language(
    path: Path, shown: str, workspace: Path, *, trusted: bool, data_dir: Path | None = None
) -> tuple[Language, str]:
    """The language of `path` and its server binary; `NoServer` saying what is missing, or
    `NeedsTrust` when the server would run the code of a workspace the user has not trusted."""
    lang = language_of(path)
    if lang is None:
        known = ", ".join(sorted(_BY_EXTENSION))
        raise NoServer(f"no language server for {shown} (files with a server: {known})")
    if not trusted and lang.project_code.runs_in(workspace):
        raise NeedsTrust(
            f"no {lang.id} language server for {shown}: {lang.project_code.why}, so it starts "
            "only in a workspace the user trusted (`openmono config trust` in the workspace)"
        )
    exe = lang.executable(data_dir)
    if exe is None:
        why = f"no {lang.id} language server here: {lang.command[0]!r} is not on PATH"
        item = for_language(lang.id)
        if item is not None:  # the user installs; we say how, we never install unasked
            why += (
                f"; the user can install one from npm with `openmono lsp install {item.name}` "
                "(ask them; do not run it yourself)"
            )
        raise NoServer(why)
    return lang, exe


def language_id_for(path: Path, lang: Language) -> str:
    """The `languageId` of a document (TypeScript's server wants JS files called javascript)."""
    suffix = path.suffix.lower()
    if lang.id == "typescript":
        if suffix in (".tsx",):
            return "typescriptreact"
        if suffix in (".js", ".mjs", ".cjs"):
            return "javascript"
        if suffix == ".jsx":
            return "javascriptreact"
    if lang.id == "c" and suffix not in (".c", ".h"):
        return "cpp"
    return lang.id
