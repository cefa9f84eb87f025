"""Language servers the user installs from npm into the data dir (`openmono lsp`): from a local
tarball (no registry), the lookup the tools use, removal, consent, and the bounded failures."""

from __future__ import annotations

import json
import shutil
import socket
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from openmono.cli import main
from openmono_worker.codeintel import (
    READS_ONLY,
    Installable,
    InstallFailed,
    Language,
    NoServer,
    install,
    is_installed,
    remove,
)
from openmono_worker.codeintel._languages import require_language

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")

TINY = Installable("tiny", "tinylang", ("unused",), "tiny-ls")


@pytest.fixture(scope="module")
def tarball(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real npm package with one binary, packed by npm (installs without a registry)."""
    src = tmp_path_factory.mktemp("tiny-src")
    (src / "package.json").write_text(
        json.dumps({"name": "tiny-ls", "version": "1.0.0", "bin": {"tiny-ls": "ls.js"}})
    )
    (src / "ls.js").write_text("#!/usr/bin/env node\nconsole.log('tiny');\n")
    (src / "ls.js").chmod(0o755)
    out = tmp_path_factory.mktemp("tiny-pack")
    subprocess.run(["npm", "pack", "-q", str(src)], cwd=out, check=True, timeout=120)
    return next(out.glob("*.tgz"))


def test_an_installed_server_is_found_by_the_tools_and_removed(
    tmp_path: Path, tarball: Path
) -> None:
    data = tmp_path / "data"
    home = install(data, TINY, packages=(str(tarball),))
    assert home == data / "lsp" / "tiny" and is_installed(data, TINY)
    assert not (data / "lsp" / "tiny.partial").exists()
    lang = Language("tinylang", (".tiny",), ("tiny-ls", "--stdio"), project_code=READS_ONLY)
    exe = lang.executable(data)
    assert exe is not None and Path(exe).parent == home / "node_modules" / ".bin"
    assert Path(exe).stat().st_mode & stat.S_IXUSR
    assert subprocess.run([exe], capture_output=True, text=True, timeout=30).stdout == "tiny\n"
    assert remove(data, TINY) and not is_installed(data, TINY)
    assert lang.executable(data) is None and not remove(data, TINY)


def test_a_failed_or_unreachable_install_leaves_nothing_and_says_why(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with pytest.raises(InstallFailed, match="installing tiny failed"):
        install(data, TINY, packages=(str(tmp_path / "missing.tgz"),))
    assert list((data / "lsp").iterdir()) == []
    with socket.socket() as sock:  # a loopback port nobody listens on: the registry is "offline"
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("npm_config_registry", f"http://127.0.0.1:{port}/")
        mp.setenv("npm_config_fetch_retries", "0")
        mp.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
        with pytest.raises(InstallFailed, match="could not reach its registry"):
            install(data, TINY, packages=("tiny-ls-not-cached@1.0.0",))
        with pytest.raises(InstallFailed, match="did not finish within 0 s"):
            install(data, TINY, packages=("tiny-ls-not-cached@1.0.0",), timeout_s=0.2)
    assert list((data / "lsp").iterdir()) == []


def test_a_missing_server_names_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(NoServer, match=r"`openmono lsp install typescript`"):
        require_language(tmp_path / "a.ts", "a.ts", tmp_path, trusted=True, data_dir=tmp_path)


def test_install_asks_and_a_no_installs_nothing(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = CliRunner().invoke(main, ["lsp", "install", "bash"], input="n\n")
    assert res.exit_code != 0 and "no consent given" in res.output
    assert "bash-language-server@" in res.output  # the question says what would be downloaded
    assert not (clean_env / "lsp").exists()
    monkeypatch.setenv("PATH", "/nonexistent")
    listed = CliRunner().invoke(main, ["lsp", "list"])
    assert listed.exit_code == 0
    assert "typescript   none  (openmono lsp install typescript)" in listed.output
    unknown = CliRunner().invoke(main, ["lsp", "install", "cobol", "--yes"])
    assert unknown.exit_code != 0
    assert "no installable language server called 'cobol'" in unknown.output
