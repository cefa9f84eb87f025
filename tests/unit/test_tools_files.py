"""FileRead, FileWrite and FileEdit against a real temporary workspace."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from openmono_contracts import ToolRequest, ToolResult
from openmono_worker.runner import run_tool

from tests.support.tool_calls import ToolBench, make_bench


@pytest.fixture
def tb(tmp_path: Path) -> ToolBench:
    return make_bench(tmp_path)


# --- FileRead -----------------------------------------------------------------------------------


def test_read_cat_n_format(tb: ToolBench) -> None:
    tb.write("a.txt", "one\ntwo\n")
    r = tb.call("FileRead", file_path="a.txt")
    assert r.ok and r.output == "     1\tone\n     2\ttwo"


def test_read_absolute_path_inside(tb: ToolBench) -> None:
    tb.write("a.txt", "one\n")
    assert tb.call("FileRead", file_path=str(tb.ws / "a.txt")).output == "     1\tone"


def test_read_offset_and_limit(tb: ToolBench) -> None:
    tb.write("a.txt", "".join(f"l{i}\n" for i in range(1, 11)))
    r = tb.call("FileRead", file_path="a.txt", offset=4, limit=2)
    assert r.output.startswith("     4\tl4\n     5\tl5\n")
    assert "showing lines 4-5 of 10; continue with offset=6" in r.output


def test_read_offset_past_end(tb: ToolBench) -> None:
    tb.write("a.txt", "x\n")
    r = tb.call("FileRead", file_path="a.txt", offset=5)
    assert not r.ok and "past the end" in (r.error or "")


def test_read_stops_under_the_artifact_threshold(tb: ToolBench) -> None:
    tb.write("big.txt", "".join(f"line number {i:05d} " + "x" * 60 + "\n" for i in range(3000)))
    r = tb.call("FileRead", file_path="big.txt")
    assert r.ok and r.artifact is None
    assert len(r.output.encode()) <= tb.settings.artifact_threshold_bytes
    assert "continue with offset=" in r.output and r.truncated


def test_read_binary_and_directory_and_missing(tb: ToolBench) -> None:
    tb.write("b.bin", b"abc\x00def")
    (tb.ws / "d").mkdir()
    assert "binary file" in (tb.call("FileRead", file_path="b.bin").error or "")
    assert "is a directory" in (tb.call("FileRead", file_path="d").error or "")
    assert "file not found" in (tb.call("FileRead", file_path="nope.txt").error or "")


def test_read_size_cap(tmp_path: Path) -> None:
    tb = make_bench(tmp_path, read_max_file_bytes=2048)
    tb.write("big.txt", "x" * 5000)
    r = tb.call("FileRead", file_path="big.txt")
    assert not r.ok and "Grep" in (r.error or "")


def test_read_long_line_is_cut_and_bad_utf8_replaced(tb: ToolBench) -> None:
    tb.write("l.txt", b"a" * 3000 + b"\n\xff\xfe ok\n")
    r = tb.call("FileRead", file_path="l.txt")
    assert "[line cut]" in r.output and "\ufffd\ufffd ok" in r.output


def test_read_empty_file(tb: ToolBench) -> None:
    tb.write("e.txt", "")
    r = tb.call("FileRead", file_path="e.txt")
    assert r.ok and "empty" in r.output


# --- FileWrite ----------------------------------------------------------------------------------


def test_write_create_then_overwrite(tb: ToolBench) -> None:
    r = tb.call("FileWrite", file_path="x/y.txt", content="a\nb\n")
    assert r.ok and r.output == "Created x/y.txt (2 lines, 4 bytes)"
    r = tb.call("FileWrite", file_path="x/y.txt", content="c")
    assert r.output == "Overwrote x/y.txt (1 lines, 1 bytes)" and tb.read("x/y.txt") == "c"


def test_write_keeps_mode_and_leaves_no_temp_file(tb: ToolBench) -> None:
    p = tb.write("run.sh", "#!/bin/sh\n")
    p.chmod(0o751)
    assert tb.call("FileWrite", file_path="run.sh", content="#!/bin/sh\necho\n").ok
    assert stat.S_IMODE(p.stat().st_mode) == 0o751
    assert sorted(os.listdir(tb.ws)) == ["run.sh"]


def test_write_through_inside_symlink_keeps_link(tb: ToolBench) -> None:
    tb.write("real.txt", "old")
    (tb.ws / "alias.txt").symlink_to("real.txt")
    assert tb.call("FileWrite", file_path="alias.txt", content="new").ok
    assert (tb.ws / "alias.txt").is_symlink() and tb.read("real.txt") == "new"


def _write_knowing(tb: ToolBench, path: str, known: list[str] | None) -> ToolResult:
    req = ToolRequest(
        tool="FileWrite",
        params={"file_path": path, "content": "new\n"},
        call_id="w",
        session_id="sess",
        workspace=str(tb.ws),
        known_files=known,
    )
    return run_tool(req, settings=tb.settings)


def test_write_refuses_to_overwrite_a_file_the_session_has_not_read(tb: ToolBench) -> None:
    tb.write("a.txt", "alpha\n")
    r = _write_knowing(tb, "a.txt", ["b.txt", "../outside.txt", "a.txt.bak", "\x00"])
    assert not r.ok and "has not read it" in (r.error or "") and "FileRead a.txt" in (r.error or "")
    assert tb.read("a.txt") == "alpha\n"
    # known under another spelling, or through a link inside that points at it: the same file
    (tb.ws / "alias.txt").symlink_to("a.txt")
    for name in (str(tb.ws / "a.txt"), "./a.txt", "alias.txt"):
        tb.write("a.txt", "alpha\n")
        assert _write_knowing(tb, "a.txt", [name]).ok and tb.read("a.txt") == "new\n"


def test_write_creates_a_new_file_without_a_read_and_unchecked_callers_overwrite(
    tb: ToolBench,
) -> None:
    assert _write_knowing(tb, "fresh/b.txt", []).ok and tb.read("fresh/b.txt") == "new\n"
    tb.write("c.txt", "gamma\n")  # None: a caller that keeps no record (a playbook script)
    assert _write_knowing(tb, "c.txt", None).ok and tb.read("c.txt") == "new\n"


def test_write_refuses_escape_and_directory(tb: ToolBench) -> None:
    assert "outside" in (tb.call("FileWrite", file_path="../x", content="").error or "")
    (tb.ws / "d").mkdir()
    assert "directory" in (tb.call("FileWrite", file_path="d", content="").error or "")
    assert not (tb.ws.parent / "x").exists()


# --- FileEdit -----------------------------------------------------------------------------------


def test_edit_replaces_and_shows_snippet(tb: ToolBench) -> None:
    tb.write("m.py", "a = 1\nb = 2\nc = 3\n")
    r = tb.call("FileEdit", file_path="m.py", old_string="b = 2", new_string="b = 20")
    assert r.ok and "1 replacement" in r.output and "     2\tb = 20" in r.output
    assert tb.read("m.py") == "a = 1\nb = 20\nc = 3\n"


def test_edit_not_found_hint(tb: ToolBench) -> None:
    tb.write("m.py", "    indented = True\n")
    r = tb.call("FileEdit", file_path="m.py", old_string="indented = True  ", new_string="x")
    assert not r.ok and "not found" in (r.error or "") and "whitespace" in (r.error or "")


def test_edit_not_unique_then_replace_all(tb: ToolBench) -> None:
    tb.write("m.py", "x\nx\nx\n")
    r = tb.call("FileEdit", file_path="m.py", old_string="x", new_string="y")
    assert not r.ok and "occurs 3 times" in (r.error or "")
    assert tb.read("m.py") == "x\nx\nx\n"
    r = tb.call("FileEdit", file_path="m.py", old_string="x", new_string="y", replace_all=True)
    assert r.ok and "3 replacements" in r.output and tb.read("m.py") == "y\ny\ny\n"


def test_multi_edit_applies_in_order(tb: ToolBench) -> None:
    tb.write("m.py", "alpha beta\n")
    edits = [
        {"old_string": "alpha", "new_string": "gamma"},
        {"old_string": "gamma beta", "new_string": "delta"},
    ]
    r = tb.call("FileEdit", file_path="m.py", edits=edits)
    assert r.ok and "from 2 edits" in r.output and tb.read("m.py") == "delta\n"


def test_multi_edit_is_atomic(tb: ToolBench) -> None:
    tb.write("m.py", "one two three\n")
    edits = [
        {"old_string": "one", "new_string": "1"},
        {"old_string": "two", "new_string": "2"},
        {"old_string": "four", "new_string": "4"},
    ]
    r = tb.call("FileEdit", file_path="m.py", edits=edits)
    assert not r.ok and "edit 3 of 3" in (r.error or "")
    assert tb.read("m.py") == "one two three\n"


def test_edit_identical_strings_refused(tb: ToolBench) -> None:
    tb.write("m.py", "a\n")
    r = tb.call("FileEdit", file_path="m.py", old_string="a", new_string="a")
    assert not r.ok and "identical" in (r.error or "")


def test_edit_crlf_file_with_lf_strings(tb: ToolBench) -> None:
    tb.write("w.txt", b"first\r\nsecond\r\nthird\r\n")
    r = tb.call("FileEdit", file_path="w.txt", old_string="first\nsecond", new_string="1\n2")
    assert r.ok
    assert (tb.ws / "w.txt").read_bytes() == b"1\r\n2\r\nthird\r\n"


def test_edit_empty_old_string_creates_file(tb: ToolBench) -> None:
    r = tb.call("FileEdit", file_path="new/f.txt", old_string="", new_string="hi\n")
    assert r.ok and "Created" in r.output and tb.read("new/f.txt") == "hi\n"
    r = tb.call("FileEdit", file_path="new/f.txt", old_string="", new_string="again")
    assert not r.ok and "already has content" in (r.error or "")


def test_edit_keeps_undecodable_bytes(tb: ToolBench) -> None:
    tb.write("latin.txt", b"caf\xe9 = 1\nx = 2\n")
    assert tb.call("FileEdit", file_path="latin.txt", old_string="x = 2", new_string="x = 3").ok
    assert (tb.ws / "latin.txt").read_bytes() == b"caf\xe9 = 1\nx = 3\n"


def test_edit_params_need_one_form(tb: ToolBench) -> None:
    r = tb.call("FileEdit", file_path="m.py", old_string="a")
    assert not r.ok and "invalid parameters" in (r.error or "")
    r = tb.call("FileEdit", file_path="m.py", old_string="a", new_string="b", edits=[])
    assert not r.ok and "not both" in (r.error or "")


def test_edit_missing_file(tb: ToolBench) -> None:
    r = tb.call("FileEdit", file_path="none.py", old_string="a", new_string="b")
    assert not r.ok and "file not found" in (r.error or "")
