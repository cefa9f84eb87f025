"""`/init`: a look at the project (languages, build and test commands, layout) as OPENMONO.md."""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections import Counter
from pathlib import Path

SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", "target", "dist", "build",
             ".mypy_cache", ".ruff_cache", ".pytest_cache", ".tox", ".openmono"}  # fmt: skip
LANGUAGES = {
    ".py": "Python", ".rs": "Rust", ".go": "Go", ".ts": "TypeScript", ".tsx": "TypeScript",
    ".js": "JavaScript", ".jsx": "JavaScript", ".java": "Java", ".kt": "Kotlin", ".cs": "C#",
    ".c": "C", ".h": "C", ".cpp": "C++", ".hpp": "C++", ".rb": "Ruby", ".php": "PHP",
    ".swift": "Swift", ".sh": "Shell", ".lua": "Lua", ".ex": "Elixir", ".zig": "Zig",
}  # fmt: skip
MAX_FILES = 20_000
MAKE_TARGET = re.compile(r"^([A-Za-z][\w.-]*):(?!=)", re.MULTILINE)


def _files(root: Path) -> list[Path]:
    found: list[Path] = []
    for here, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        found += [Path(here) / n for n in names]
        if len(found) > MAX_FILES:
            break
    return found


def languages(files: list[Path]) -> list[tuple[str, int]]:
    counts = Counter(LANGUAGES[f.suffix] for f in files if f.suffix in LANGUAGES)
    return counts.most_common(6)


def commands(root: Path) -> list[tuple[str, str]]:
    """(what, command) pairs read from the build files that are there."""
    found: list[tuple[str, str]] = []
    makefile = root / "Makefile"
    if makefile.is_file():
        targets = MAKE_TARGET.findall(makefile.read_text(errors="replace"))
        for name in ("setup", "build", "test", "check", "lint", "bench"):
            if name in targets:
                found.append((name, f"make {name}"))
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(errors="replace"))
        except tomllib.TOMLDecodeError:
            data = {}
        runner = "uv run " if (root / "uv.lock").is_file() else ""
        if (root / "uv.lock").is_file():
            found.append(("install", "uv sync"))
        tools = data.get("tool", {})
        if "pytest" in tools or (root / "tests").is_dir():
            found.append(("test", f"{runner}pytest"))
        if "ruff" in tools:
            found.append(("lint", f"{runner}ruff check ."))
        if "mypy" in tools:
            found.append(("types", f"{runner}mypy"))
    package = root / "package.json"
    if package.is_file():
        try:
            scripts = json.loads(package.read_text(errors="replace")).get("scripts", {})
        except ValueError:
            scripts = {}
        for name in ("build", "test", "lint", "dev"):
            if name in scripts:
                found.append((name, f"npm run {name}"))
    for marker, pairs in (
        ("Cargo.toml", [("build", "cargo build"), ("test", "cargo test")]),
        ("go.mod", [("build", "go build ./..."), ("test", "go test ./...")]),
    ):
        if (root / marker).is_file():
            found += pairs
    seen: set[str] = set()
    return [(w, c) for w, c in found if not (c in seen or seen.add(c))]  # type: ignore[func-returns-value]


def layout(root: Path) -> list[str]:
    lines = []
    for entry in sorted(root.iterdir()):
        if entry.name.startswith(".") or entry.name in SKIP_DIRS:
            continue
        if entry.is_dir():
            count = sum(1 for _ in entry.rglob("*") if _.is_file())
            lines.append(f"- `{entry.name}/` ({count} files)")
        else:
            lines.append(f"- `{entry.name}`")
    return lines[:40]


def survey(root: Path) -> str:
    """The text of OPENMONO.md for `root`."""
    files = _files(root)
    out = [f"# {root.name}", "", "Project notes for OpenMono (written by /init; edit freely).", ""]
    langs = languages(files)
    if langs:
        out += ["## Languages", ""] + [f"- {name}: {n} files" for name, n in langs] + [""]
    cmds = commands(root)
    if cmds:
        out += ["## Commands", ""] + [f"- {what}: `{cmd}`" for what, cmd in cmds] + [""]
    out += ["## Layout", "", *layout(root), ""]
    return "\n".join(out)
