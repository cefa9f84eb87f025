"""CodeIntel on TypeScript and Go workspaces, called the way both executors call it (`run_tool`).

The real tool path: arguments validated by the worker, paths guarded, the code graph built from
the fixture projects (`tests/fixtures/codeintel/ts`, `.../go`), refreshed after an edit made
behind its back. No language server is involved.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.tool_calls import ToolBench, make_bench

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "codeintel"


def bench_of(tmp_path: Path, lang: str) -> ToolBench:
    tb = make_bench(tmp_path)
    shutil.copytree(FIXTURES / lang, tb.ws, dirs_exist_ok=True)
    return tb


def ok(tb: ToolBench, **params: object) -> str:
    res = tb.call("CodeIntel", **params)
    assert res.ok, res.error
    return res.output


def test_typescript_workspace(tmp_path: Path) -> None:
    tb = bench_of(tmp_path, "ts")
    out = ok(tb, operation="definition", symbol="Circle")
    assert "Circle (class) src/geometry.ts:8" in out
    refs = ok(tb, operation="find-references", symbol="Circle")
    assert "5 references in 2 files (linked by imports)" in refs
    assert "src/app.ts:5:23 call in main" in refs and "src/view.tsx:5:17" in refs
    # totalArea: two definitions; the one in geometry.ts is what app.ts imports
    res = tb.call("CodeIntel", operation="callers", symbol="totalArea")
    assert not res.ok and "ambiguous (2 symbols)" in (res.error or "")
    callers = ok(tb, operation="callers", symbol="totalArea", file_path="src/geometry.ts")
    assert "main (function) src/app.ts:4  calls at src/app.ts:6" in callers
    callers = ok(tb, operation="callers", symbol="totalArea", file_path="src/format.ts")
    assert "0 callers" in callers  # imported from nowhere
    callees = ok(tb, operation="callees", symbol="main")
    assert "Circle at line 5" in callees and "(import)" in callees
    assert "show at line 6 -> show (function) src/format.ts:1" in callees
    outline = ok(tb, operation="overview", file_path="src/geometry.ts")
    assert "  area(): number {  [11]" in outline
    blast = ok(tb, operation="blast-radius", symbol="Shape")
    assert "totalArea (function) src/geometry.ts:23" in blast
    assert "main (function) src/app.ts:4" in blast  # through totalArea, depth 2
    found = ok(tb, operation="search", symbol="circ")
    assert "CircleView (function) src/view.tsx:4" in found
    src = ok(tb, operation="get-symbol", symbol="show")
    assert "return value.toFixed(2);" in src
    res = tb.call("CodeIntel", operation="diagnostics", file_path="src/app.ts")
    assert not res.ok and "use Lsp diagnostics" in (res.error or "")


def test_go_workspace_and_an_edit_behind_its_back(tmp_path: Path) -> None:
    tb = bench_of(tmp_path, "go")
    refs = ok(tb, operation="find-references", symbol="Scale")
    assert "main.go:11:18 call in main" in refs
    callers = ok(tb, operation="callers", symbol="Circle.Area")
    assert "Total (function) geometry/geometry.go:22" in callers
    scale = tb.ws / "geometry" / "scale.go"  # as Bash or git would change it
    scale.write_text(scale.read_text() + "\nfunc Grow(c Circle) Circle { return Scale(c, 3) }\n")
    callers = ok(tb, operation="callers", symbol="Scale")
    assert "Grow (function) geometry/scale.go:8" in callers
    res = tb.call("CodeIntel", operation="find-references", symbol="Nowhere")
    assert not res.ok and "try operation=search" in (res.error or "")


def test_paths_stay_in_the_workspace(tmp_path: Path) -> None:
    tb = bench_of(tmp_path, "go")
    outside = tmp_path / "elsewhere.go"
    outside.write_text("package x\nfunc Secret() {}\n")
    (tb.ws / "link.go").symlink_to(outside)
    res = tb.call("CodeIntel", operation="overview", file_path="link.go")
    assert not res.ok and "outside the workspace" in (res.error or "")
    assert "Secret" not in ok(tb, operation="overview")
    tb.write("notes.txt", "hello")
    res = tb.call("CodeIntel", operation="overview", file_path="notes.txt")
    assert not res.ok and "not in a language CodeIntel reads" in (res.error or "")
