"""Grep (ripgrep and the Python engine, same output), Glob and ListDirectory on real trees."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.support.tool_calls import ToolBench, make_bench

ENGINES = ["rg", "python"]
needs_rg = pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep (apt: ripgrep) missing")


def tree(tb: ToolBench) -> None:
    tb.write("src/app.py", "import os\n\ndef main():\n    return helper()\n\n\n\nmain()\n")
    tb.write("src/lib/helper.py", "def helper():\n    return 'MAIN'\n")
    tb.write("src/notes.md", "main notes\n")
    tb.write("a.py", "print('main')\n")
    tb.write("build/gen.py", "def main(): pass\n")
    tb.write("logs/x.log", "main\n")
    tb.write(".hidden/h.py", "def main(): pass\n")
    tb.write("blob.bin", b"\x00main\x00")
    tb.write(".gitignore", "build/\n*.log\n")
    tb.write("src/lib/.gitignore", "/skip.py\n")
    tb.write("src/lib/skip.py", "main\n")
    tb.write("src/.dot.py", "main\n")


@pytest.fixture(params=[pytest.param("rg", marks=needs_rg), "python"])
def tb(request: pytest.FixtureRequest, tmp_path: Path) -> ToolBench:
    bench = make_bench(tmp_path, grep_engine=request.param)
    tree(bench)
    return bench


QUERIES = [
    {"pattern": "main"},
    {"pattern": "MAIN", "case_insensitive": True, "glob": "*.py", "context_lines": 1},
    {"pattern": "main", "path": "src", "max_results": 2},
    {"pattern": "main", "path": "src/app.py", "context_lines": 2},
    {"pattern": r"def \w+\(", "glob": "src/**"},
    {"pattern": "main", "glob": "!*.md"},
    {"pattern": "nothing-matches-this"},
]


@needs_rg
@pytest.mark.parametrize("query", QUERIES, ids=[str(i) for i in range(len(QUERIES))])
def test_both_engines_give_identical_output(tmp_path: Path, query: dict[str, object]) -> None:
    outputs = []
    for engine in ENGINES:
        bench = make_bench(tmp_path / engine, grep_engine=engine)
        tree(bench)
        r = bench.call("Grep", **query)
        assert r.ok, r.error
        outputs.append(r.output)
    assert outputs[0] == outputs[1]


def test_grep_skips_hidden_binary_and_ignored(tb: ToolBench) -> None:
    r = tb.call("Grep", pattern="main")
    assert r.output.splitlines() == [
        "a.py:1:print('main')",
        "src/app.py:3:def main():",
        "src/app.py:8:main()",
        "src/notes.md:1:main notes",
        "[4 matching lines in 3 files]",
    ]


def test_grep_glob_overrides_hidden_and_ignored_like_rg(tb: ToolBench) -> None:
    out = tb.call("Grep", pattern="main", glob="*.py").output
    assert "src/.dot.py:1:main" in out and "src/lib/skip.py:1:main" in out
    assert "build/" not in out  # an ignored directory is still not entered


def test_grep_context_and_separator(tb: ToolBench) -> None:
    r = tb.call("Grep", pattern="main", path="src/app.py", context_lines=1)
    assert r.output.splitlines() == [
        "src/app.py-2-",
        "src/app.py:3:def main():",
        "src/app.py-4-    return helper()",
        "--",
        "src/app.py-7-",
        "src/app.py:8:main()",
        "[2 matching lines in 1 file]",
    ]


def test_grep_max_results_cuts(tb: ToolBench) -> None:
    r = tb.call("Grep", pattern="main", max_results=1)
    assert r.truncated and r.output.splitlines() == [
        "a.py:1:print('main')",
        "[1 matching line in 1 file; stopped at max_results=1]",
    ]


def test_grep_invalid_regex_and_escape(tb: ToolBench) -> None:
    r = tb.call("Grep", pattern="(unclosed")
    assert not r.ok and "invalid regex" in (r.error or "")
    r = tb.call("Grep", pattern="x", path="..")
    assert not r.ok and "outside the workspace" in (r.error or "")


def test_grep_does_not_follow_symlinks_out(tb: ToolBench, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "s.py").write_text("main secret\n")
    (tb.ws / "src" / "link").symlink_to(outside, target_is_directory=True)
    assert "secret" not in tb.call("Grep", pattern="main").output


def test_grep_can_search_an_artifact(tb: ToolBench) -> None:
    big = tb.call("Bash", command="for i in $(seq 1 3000); do echo row $i; done")
    assert big.artifact
    r = tb.call("Grep", pattern="^row 2999$", path=big.artifact)
    assert r.ok and f"{big.artifact}:2999:row 2999" in r.output


# --- Glob ---------------------------------------------------------------------------------------


def test_glob_newest_first(tmp_path: Path) -> None:
    tb = make_bench(tmp_path)
    for i, name in enumerate(["old.py", "mid.py", "src/new.py"]):
        p = tb.write(name, "")
        os.utime(p, (1_000_000 + i * 100, 1_000_000 + i * 100))
    r = tb.call("Glob", pattern="*.py")
    assert r.output.splitlines() == ["src/new.py", "mid.py", "old.py"]


def test_glob_patterns(tmp_path: Path) -> None:
    tb = make_bench(tmp_path)
    for name in ["src/a.py", "src/b.ts", "src/deep/c.py", "docs/x.md", "build/y.py", ".h/z.py"]:
        tb.write(name, "")
    tb.write(".gitignore", "build/\n")

    def names(**kw: object) -> list[str]:
        return sorted(tb.call("Glob", **kw).output.splitlines())

    assert names(pattern="**/*.py") == ["src/a.py", "src/deep/c.py"]
    assert names(pattern="src/*.py") == ["src/a.py"]
    assert names(pattern="*.{md,ts}") == ["docs/x.md", "src/b.ts"]
    assert names(pattern="*.py", path="src/deep") == ["src/deep/c.py"]
    assert "No files match" in tb.call("Glob", pattern="*.rs").output
    assert not tb.call("Glob", pattern="../*").ok
    assert not tb.call("Glob", pattern="*", path="/etc").ok


# --- ListDirectory ------------------------------------------------------------------------------


def test_list_flat_and_recursive(tmp_path: Path) -> None:
    tb = make_bench(tmp_path)
    for name in ["b.txt", "a/x.py", "a/y/z.py", ".git/HEAD", "node_modules/m/i.js"]:
        tb.write(name, "")
    (tb.ws / "link").symlink_to("a/x.py")
    flat = tb.call("ListDirectory").output.splitlines()
    assert flat == ["./", ".git/", "a/", "b.txt", "link -> a/x.py", "node_modules/"]
    rec = tb.call("ListDirectory", recursive=True).output.splitlines()
    assert rec == [
        "./",
        ".git/ (not expanded)",
        "a/",
        "a/x.py",
        "a/y/",
        "a/y/z.py",
        "b.txt",
        "link -> a/x.py",
        "node_modules/ (not expanded)",
    ]


def test_list_bounded(tmp_path: Path) -> None:
    tb = make_bench(tmp_path)
    for i in range(30):
        tb.write(f"f{i:02d}", "")
    r = tb.call("ListDirectory", max_entries=5)
    assert r.truncated and r.output.splitlines()[1:6] == ["f00", "f01", "f02", "f03", "f04"]
    assert "stopped at max_entries=5" in r.output


def test_list_errors(tmp_path: Path) -> None:
    tb = make_bench(tmp_path)
    tb.write("f.txt", "")
    assert "FileRead" in (tb.call("ListDirectory", path="f.txt").error or "")
    assert "no such directory" in (tb.call("ListDirectory", path="nope").error or "")
    assert "outside" in (tb.call("ListDirectory", path="/").error or "")
