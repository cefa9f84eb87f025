"""Language servers installed from npm into the data dir, with the user's consent.

Each installable server gets its own npm prefix, `<data_dir>/lsp/<name>/`, so removing one is
removing a folder and none can break another's dependencies. An install writes into a
`<name>.partial` folder and renames it when npm succeeded: a folder there is a whole install.
npm runs in its own session with a deadline; at the deadline its whole process group is killed.
Package scripts are not run (`--ignore-scripts`): none of these servers needs one, and an install
should not run code beyond the package manager itself. Only the user installs (`openmono lsp
install`): a tool that lacks a server says which command would install it, never installs it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from openmono_contracts.privatefs import PRIVATE_UMASK, private_dir, write_private

from openmono_worker.codeintel._errors import CodeIntelError

INSTALL_TIMEOUT_S = 300.0


class InstallFailed(CodeIntelError):
    """npm is missing, the registry is unreachable, the install failed or ran out of time."""


@dataclass(frozen=True)
class Installable:
    """A language server npm ships: what to install and which binary serves `language`."""

    name: str
    language: str  # a `Language.id`
    packages: tuple[str, ...]  # npm specs, pinned
    binary: str  # the server's command in node_modules/.bin
    note: str = ""


# Pinned: the versions checked with Node 20 (typescript-language-server 6 needs Node >= 22).
INSTALLABLE: tuple[Installable, ...] = (
    Installable(
        "typescript",
        "typescript",
        ("typescript-language-server@5.1.3", "typescript@5.9.3"),
        "typescript-language-server",
    ),
    Installable(
        "pyright",
        "python",
        ("pyright@1.1.414",),
        "pyright-langserver",
        "used where basedpyright (a dependency of the worker) is not installed",
    ),
    Installable("bash", "shellscript", ("bash-language-server@5.8.1",), "bash-language-server"),
)


def servers_dir(data_dir: Path) -> Path:
    return data_dir / "lsp"


def installable(name: str) -> Installable:
    for item in INSTALLABLE:
        if item.name == name:
            return item
    known = ", ".join(i.name for i in INSTALLABLE)
    raise InstallFailed(f"no installable language server called {name!r} (known: {known})")


def for_language(language: str) -> Installable | None:
    return next((i for i in INSTALLABLE if i.language == language), None)


def installed_binary(data_dir: Path, binary: str) -> str | None:
    """The path of `binary` in one of the servers installed under `data_dir`, or None."""
    root = servers_dir(data_dir)
    if not root.is_dir():
        return None
    for home in sorted(root.iterdir()):
        if home.name.endswith(".partial"):
            continue
        candidate = home / "node_modules" / ".bin" / binary
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def is_installed(data_dir: Path, item: Installable) -> bool:
    return (servers_dir(data_dir) / item.name / "node_modules" / ".bin" / item.binary).is_file()


def _npm_error(output: str) -> str:
    offline = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ENETUNREACH")
    if any(code in output for code in offline):
        return "npm could not reach its registry (offline?)"
    lines = [line for line in output.splitlines() if "ERR!" in line]
    return "; ".join(line.split("ERR!", 1)[1].strip() for line in lines[:4]) or output[-400:]


def install(
    data_dir: Path,
    item: Installable,
    *,
    packages: tuple[str, ...] | None = None,
    timeout_s: float = INSTALL_TIMEOUT_S,
) -> Path:
    """Install `item` (or `packages` in its place: a test's local tarballs) into its own prefix
    under `data_dir`; the prefix, or `InstallFailed` saying why (nothing half-installed stays)."""
    npm = shutil.which("npm")
    if npm is None:
        raise InstallFailed("npm is not installed here (the servers come from the npm registry)")
    root = servers_dir(data_dir)
    final, partial = root / item.name, root / f"{item.name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    private_dir(partial)
    # a package.json of our own: npm installs into this prefix, not into a parent project
    write_private(partial / "package.json", json.dumps({"name": f"openmono-lsp-{item.name}"}))
    argv = [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--no-save"]
    argv += ["--prefix", str(partial), *(packages or item.packages)]
    proc = subprocess.Popen(
        argv,
        cwd=partial,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
        umask=PRIVATE_UMASK,  # the installed tree is under the data dir: 0700/0600 (privatefs)
    )
    try:
        output, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        shutil.rmtree(partial, ignore_errors=True)
        raise InstallFailed(f"npm did not finish within {timeout_s:.0f} s (killed)") from None
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        shutil.rmtree(partial, ignore_errors=True)
        raise
    if proc.returncode != 0 or not (partial / "node_modules" / ".bin" / item.binary).is_file():
        shutil.rmtree(partial, ignore_errors=True)
        why = _npm_error(output) if proc.returncode else f"it installed no {item.binary!r}"
        raise InstallFailed(f"installing {item.name} failed: {why}")
    shutil.rmtree(final, ignore_errors=True)
    partial.rename(final)
    return final


def remove(data_dir: Path, item: Installable) -> bool:
    """Remove `item`'s prefix; whether there was one."""
    final = servers_dir(data_dir) / item.name
    if not final.exists():
        return False
    shutil.rmtree(final)
    return True
