"""ApplyPatch: unified diffs over real files — modify, create, delete, rename, fuzz, atomicity."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.tool_calls import ToolBench, make_bench


@pytest.fixture
def tb(tmp_path: Path) -> ToolBench:
    return make_bench(tmp_path)


def git_diff(old: Path, new: Path) -> str:
    """A real `diff -u` between two files, relabelled as a/x b/x."""
    out = subprocess.run(
        ["diff", "-u", "--label", "a/code.py", "--label", "b/code.py", str(old), str(new)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 1, out.stderr
    return out.stdout


def test_real_diff_output_applies(tb: ToolBench, tmp_path: Path) -> None:
    old = "".join(f"line {i}\n" for i in range(1, 40))
    new = (
        old.replace("line 5\n", "line five\n")
        .replace("line 30\n", "")
        .replace("line 38\n", "line 38\nadded\n")
    )
    (tmp_path / "old").write_text(old)
    (tmp_path / "new").write_text(new)
    tb.write("code.py", old)
    r = tb.call("ApplyPatch", patch=git_diff(tmp_path / "old", tmp_path / "new"))
    assert r.ok, r.error
    assert tb.read("code.py") == new
    assert "modified code.py (+2 -2" in r.output


def test_fuzzy_position_is_reported(tb: ToolBench) -> None:
    tb.write("f.txt", "new top\nnew top 2\na\nb\nc\n")
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
    r = tb.call("ApplyPatch", patch=patch)
    assert r.ok and tb.read("f.txt") == "new top\nnew top 2\na\nB\nc\n"
    assert "applied at line 3 (patch said 1)" in r.output


def test_trailing_whitespace_tolerated(tb: ToolBench) -> None:
    tb.write("f.txt", "a  \nb\n")
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
    assert tb.call("ApplyPatch", patch=patch).ok
    assert tb.read("f.txt") == "a  \nc\n"


def test_mismatch_changes_nothing_anywhere(tb: ToolBench) -> None:
    tb.write("one.txt", "1\n")
    tb.write("two.txt", "2\n")
    patch = (
        "--- a/one.txt\n+++ b/one.txt\n@@ -1 +1 @@\n-1\n+one\n"
        "--- a/two.txt\n+++ b/two.txt\n@@ -1 +1 @@\n-not two\n+two\n"
    )
    r = tb.call("ApplyPatch", patch=patch)
    assert not r.ok and "two.txt: hunk 1" in (r.error or "")
    assert tb.read("one.txt") == "1\n" and tb.read("two.txt") == "2\n"


def test_failed_write_rolls_back_earlier_files(tb: ToolBench) -> None:
    # A 250-byte name passes planning but its temp file name is too long for the filesystem.
    tb.write("one.txt", "1\n")
    long_name = "n" * 250
    patch = (
        "--- a/one.txt\n+++ b/one.txt\n@@ -1 +1 @@\n-1\n+one\n"
        f"--- /dev/null\n+++ b/{long_name}\n@@ -0,0 +1 @@\n+x\n"
    )
    r = tb.call("ApplyPatch", patch=patch)
    assert not r.ok and "no file was changed" in (r.error or "")
    assert tb.read("one.txt") == "1\n"
    assert not (tb.ws / long_name).exists()


def test_create_existing_and_delete_missing_refused(tb: ToolBench) -> None:
    tb.write("here.txt", "x\n")
    r = tb.call("ApplyPatch", patch="--- /dev/null\n+++ b/here.txt\n@@ -0,0 +1 @@\n+y\n")
    assert not r.ok and "already exists" in (r.error or "")
    r = tb.call("ApplyPatch", patch="--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n")
    assert not r.ok and "does not exist" in (r.error or "")


def test_partial_delete_refused(tb: ToolBench) -> None:
    tb.write("d.txt", "a\nb\n")
    r = tb.call("ApplyPatch", patch="--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n")
    assert not r.ok and "whole file" in (r.error or "")
    assert tb.read("d.txt") == "a\nb\n"


def test_rename_with_change(tb: ToolBench) -> None:
    tb.write("old/name.py", "x = 1\n")
    patch = "--- a/old/name.py\n+++ b/new/name.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    r = tb.call("ApplyPatch", patch=patch)
    assert r.ok, r.error
    assert not (tb.ws / "old/name.py").exists() and tb.read("new/name.py") == "x = 2\n"


def test_no_newline_at_end_markers(tb: ToolBench) -> None:
    tb.write("n.txt", "a\nb")
    patch = (
        "--- a/n.txt\n+++ b/n.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n"
        "+c\n\\ No newline at end of file\n"
    )
    assert tb.call("ApplyPatch", patch=patch).ok
    assert tb.read("n.txt") == "a\nc"


def test_crlf_file_keeps_crlf(tb: ToolBench) -> None:
    tb.write("w.txt", b"a\r\nb\r\n")
    assert tb.call("ApplyPatch", patch="--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n").ok
    assert (tb.ws / "w.txt").read_bytes() == b"a\r\nc\r\n"


def test_code_fence_and_git_headers_are_ignored(tb: ToolBench) -> None:
    tb.write("f.txt", "a\n")
    patch = (
        "```diff\ndiff --git a/f.txt b/f.txt\nindex 123..456 100644\n"
        "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n```\n"
    )
    assert tb.call("ApplyPatch", patch=patch).ok and tb.read("f.txt") == "b\n"


def test_two_patches_to_the_same_file(tb: ToolBench) -> None:
    tb.write("f.txt", "a\nb\n")
    patch = (
        "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+A\n"
        "--- a/f.txt\n+++ b/f.txt\n@@ -2 +2 @@\n-b\n+B\n"
    )
    assert tb.call("ApplyPatch", patch=patch).ok and tb.read("f.txt") == "A\nB\n"


def test_escaping_paths_refused(tb: ToolBench) -> None:
    r = tb.call("ApplyPatch", patch="--- /dev/null\n+++ b/../evil.txt\n@@ -0,0 +1 @@\n+x\n")
    assert not r.ok and "outside the workspace" in (r.error or "")
    assert not (tb.ws.parent / "evil.txt").exists()


def test_not_a_diff(tb: ToolBench) -> None:
    r = tb.call("ApplyPatch", patch="*** Begin Patch\n*** Update File: x\n")
    assert not r.ok and "unified diff" in (r.error or "")


def test_dry_run_reports_without_writing(tb: ToolBench) -> None:
    tb.write("f.txt", "a\n")
    r = tb.call("ApplyPatch", patch="--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n", dry_run=True)
    assert r.ok and "Dry run" in r.output and "modified f.txt (+1 -1, 1 hunk)" in r.output
    assert tb.read("f.txt") == "a\n"
