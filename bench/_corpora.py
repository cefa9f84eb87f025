"""Real source trees for the code-intelligence benchmarks, fetched from the package registries.

Pinned versions, one per language, each fetched once with the registry's own client into
`<cache>/<name>/` and unpacked there (no internet but the registries: PyPI sdists, npm packages
that ship their TypeScript sources, Debian's packaged Go and Rust sources):

    django  Django 5.1.4, the PyPI sdist (2,788 .py files: the 2,000-file incremental target)
    rxjs    rxjs 7.8.1, the npm package's src/ (251 .ts files)
    xnet    golang.org/x/net 0.7.0, Debian's golang-golang-x-net-dev (564 .go files)
    tokio   tokio 1.24.2, Debian's librust-tokio-dev (420 .rs files)
"""

from __future__ import annotations

import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Corpus:
    name: str
    language: str
    how: str  # pypi | npm | deb
    spec: str
    inner: str  # the source tree inside what was unpacked
    files: str  # glob of the sources Aider is given


CORPORA = (
    Corpus("django", "python", "pypi", "Django==5.1.4", "Django-5.1.4", "**/*.py"),
    Corpus("rxjs", "typescript", "npm", "rxjs@7.8.1", "package/src", "**/*.ts"),
    Corpus(
        "xnet",
        "go",
        "deb",
        "golang-golang-x-net-dev=1:0.7.0+dfsg-1",
        "usr/share/gocode/src/golang.org/x/net",
        "**/*.go",
    ),
    Corpus(
        "tokio",
        "rust",
        "deb",
        "librust-tokio-dev=1.24.2-1",
        "usr/share/cargo/registry/tokio-1.24.2",
        "**/*.rs",
    ),
)


def _run(argv: list[str], cwd: Path) -> None:
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True, timeout=600)


def fetch(corpus: Corpus, cache: Path) -> Path:
    """The unpacked source tree of `corpus` (fetched on first use)."""
    home = cache / corpus.name
    tree = home / "unpacked" / corpus.inner
    if tree.is_dir():
        return tree
    shutil.rmtree(home, ignore_errors=True)
    download = home / "download"
    download.mkdir(parents=True)
    unpacked = home / "unpacked"
    unpacked.mkdir()
    if corpus.how == "pypi":
        _run(
            ["pip", "download", "-q", "--no-deps", "--no-binary", ":all:", corpus.spec, "-d", "."],
            download,
        )
    elif corpus.how == "npm":
        _run(["npm", "pack", "-q", corpus.spec], download)
    else:
        _run(["apt-get", "download", "-q", corpus.spec], download)
    for archive in download.iterdir():
        if archive.suffix == ".deb":
            _run(["dpkg-deb", "-x", str(archive), str(unpacked)], download)
        else:
            with tarfile.open(archive) as tar:
                tar.extractall(unpacked, filter="data")
    if not tree.is_dir():
        raise SystemExit(f"{corpus.name}: {corpus.inner} not in what {corpus.spec} unpacked to")
    return tree
