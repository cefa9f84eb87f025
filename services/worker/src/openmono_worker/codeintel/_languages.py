"""Which language server serves which file: a table of languages, extensions and commands.

Python's server (basedpyright) is a dependency of the worker, so it sits next to the running
interpreter; every other server is used when its binary is on PATH and skipped otherwise. A
server's `settings` answer its `workspace/configuration` requests (by section).
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openmono_worker.codeintel._errors import NoServer


@dataclass(frozen=True)
class Language:
    """One language: its LSP id, file extensions and the server command (argv[0] is looked up)."""

    id: str
    extensions: tuple[str, ...]
    command: tuple[str, ...]
    # Answers to `workspace/configuration`, nested by section ("a.b" is settings["a"]["b"]).
    settings: dict[str, Any] = field(default_factory=dict)

    def executable(self) -> str | None:
        """The server binary's path, or None when it is not installed here."""
        name = self.command[0]
        beside = Path(sys.executable).parent / name
        if beside.is_file() and os.access(beside, os.X_OK):
            return str(beside)
        return shutil.which(name)


# basedpyright's defaults ("recommended") flag every `Any`; "standard" keeps to real errors, and
# openFilesOnly keeps it from checking the whole workspace on start.
_PYRIGHT_ANALYSIS = {
    "typeCheckingMode": "standard",
    "diagnosticMode": "openFilesOnly",
    "autoSearchPaths": True,
    "useLibraryCodeForTypes": True,
}

LANGUAGES: tuple[Language, ...] = (
    Language(
        "python",
        (".py", ".pyi"),
        ("basedpyright-langserver", "--stdio"),
        {
            "basedpyright": {"analysis": _PYRIGHT_ANALYSIS},
            "python": {"analysis": _PYRIGHT_ANALYSIS},
        },
    ),
    Language(
        "typescript",
        (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"),
        ("typescript-language-server", "--stdio"),
    ),
    Language("go", (".go",), ("gopls",)),
    Language("rust", (".rs",), ("rust-analyzer",)),
    Language("c", (".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh"), ("clangd",)),
    Language("csharp", (".cs",), ("csharp-ls",)),
    Language("lua", (".lua",), ("lua-language-server",)),
    Language("shellscript", (".sh", ".bash"), ("bash-language-server", "start")),
)

_BY_EXTENSION = {ext: lang for lang in LANGUAGES for ext in lang.extensions}


def language_of(path: Path) -> Language | None:
    """The language of a file by its extension, or None for one we have no server for."""
    return _BY_EXTENSION.get(path.suffix.lower())


def require_language(path: Path, shown: str) -> tuple[Language, str]:
    """The language of `path` and its server binary, or `NoServer` saying what is missing."""
    lang = language_of(path)
    if lang is None:
        known = ", ".join(sorted(_BY_EXTENSION))
        raise NoServer(f"no language server for {shown} (files with a server: {known})")
    exe = lang.executable()
    if exe is None:
        raise NoServer(f"no {lang.id} language server here: {lang.command[0]!r} is not on PATH")
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
