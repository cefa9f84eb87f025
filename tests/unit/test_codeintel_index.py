"""The Python index (`openmono_worker.codeintel`): scanning, resolution, incremental refresh, diffs.

Pure Python, no language server: the fixture package is copied to a temporary workspace.
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from openmono_worker import CallCancelled
from openmono_worker.codeintel import (
    Finding,
    PyIndex,
    blast_radius,
    compare,
    forget_indexes,
    index_for,
    module_name,
    new_errors,
    save_index,
    type_hierarchy,
)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "codeintel" / "python"


@pytest.fixture
def index(tmp_path: Path) -> PyIndex:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURE, root)
    ix = PyIndex(root.resolve())
    ix.refresh()
    return ix


def spots(ix: PyIndex, qname: str) -> set[str]:
    return {f"{u.file}:{u.line}" for u in ix.references(qname)}


def test_module_names_follow_packages(tmp_path: Path) -> None:
    pkg = tmp_path / "src" / "pkg" / "sub"
    pkg.mkdir(parents=True)
    for d in (pkg, pkg.parent):
        (d / "__init__.py").write_text("")
    (pkg / "mod.py").write_text("")
    (tmp_path / "script.py").write_text("")
    assert module_name(pkg / "mod.py", tmp_path) == ("pkg.sub.mod", False)
    assert module_name(pkg / "__init__.py", tmp_path) == ("pkg.sub", True)
    assert module_name(tmp_path / "script.py", tmp_path) == ("script", False)


def test_symbols_and_signatures(index: PyIndex) -> None:
    scale = index.symbols["geometry.core.scale"]
    assert (scale.kind, scale.file, scale.line, scale.end) == (
        "function",
        "geometry/core.py",
        30,
        31,
    )
    assert scale.signature == "def scale(value: float, factor: float=2.0) -> float"
    shape = index.symbols["geometry.core.Shape"]
    assert (shape.start, shape.line) == (6, 7)  # the decorator line starts it
    assert index.symbols["geometry.core.Shape.area"].kind == "method"
    assert index.symbols["geometry.cli.DEFAULT"].kind == "variable"


def test_references_resolve_imports_reexports_and_self(index: PyIndex) -> None:
    assert spots(index, "geometry.core.scale") == {
        "geometry/__init__.py:3",
        "geometry/__init__.py:5",  # its name in __all__
        "geometry/report.py:4",
        "geometry/report.py:12",
    }
    # `core.area(s)` through `from geometry import core`, and the package's re-export
    assert spots(index, "geometry.core.area") == {
        "geometry/__init__.py:3",
        "geometry/__init__.py:5",
        "geometry/report.py:8",
    }
    assert index.find("geometry.area")[0].qname == "geometry.core.area"
    # `self.area()` in Shape.describe is Shape.area; `shape.area()` (a parameter) is unknown
    assert spots(index, "geometry.core.Shape.area") == {"geometry/core.py:14"}
    assert {(u.file, u.line) for u in index.unresolved("area")} == {("geometry/core.py", 27)}
    # `self.side` is not a use of the class Square
    assert spots(index, "geometry.core.Square") == {
        "geometry/report.py:4",
        "geometry/report.py:11",
        "geometry/report.py:12",
        "geometry/report.py:16",
    }


def test_a_local_of_the_same_name_is_not_a_reference(index: PyIndex) -> None:
    extra = index.workspace / "geometry" / "local.py"
    extra.write_text("def f(scale: float) -> float:\n    return scale * 2\n")
    index.refresh()
    assert not any(u.file == "geometry/local.py" for u in index.references("geometry.core.scale"))


def test_find_by_suffix_and_file(index: PyIndex) -> None:
    assert [s.qname for s in index.find("Square.area")] == ["geometry.core.Square.area"]
    assert len(index.find("area")) == 3
    assert [s.qname for s in index.find("area", "geometry/report.py")] == []
    assert [s.qname for s in index.find("summary", "geometry/report.py")] == [
        "geometry.report.summary"
    ]


def test_hierarchy_and_blast_radius(index: PyIndex) -> None:
    assert index.bases["geometry.core.Square"] == ["geometry.core.Shape"]
    assert index.subclasses["geometry.core.Shape"] == ["geometry.core.Square"]
    text = type_hierarchy(index, index.symbols["geometry.core.Square.area"])
    assert "overrides:\n  geometry.core.Shape.area (method) geometry/core.py:10" in text
    radius = blast_radius(index, index.symbols["geometry.report.summary"])
    assert "geometry.cli.DEFAULT (variable) geometry/cli.py:5" in radius
    assert "geometry.cli.main (function) geometry/cli.py:8" in radius
    assert "2 dependents in 1 files" in radius


def test_refresh_rescans_only_what_changed(index: PyIndex) -> None:
    scans = index.scans
    assert scans == 4 and index.refresh() == 0 and index.scans == scans
    report = index.workspace / "geometry" / "report.py"
    builds = index.full_builds
    # a body-only edit re-resolves just that file; a new top-level name re-resolves everything
    report.write_text(report.read_text().replace("scale(side)", "scale(side, 3.0)"))
    assert index.refresh() == 1 and index.full_builds == builds
    assert "geometry/report.py:12" in spots(index, "geometry.core.scale")
    report.write_text(report.read_text() + "\n\nHALF = scale(0.5)\n")
    assert index.refresh() == 1 and index.scans == scans + 2 and index.full_builds == builds + 1
    assert "geometry/report.py:19" in spots(index, "geometry.core.scale")
    # a new mtime with the same bytes is not a change (hash compared)
    st = report.stat()
    os.utime(report, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    assert index.refresh() == 0 and index.scans == scans + 2
    (index.workspace / "geometry" / "cli.py").unlink()
    assert index.refresh() == 1
    assert spots(index, "geometry.report.summary") == set()
    assert "geometry.cli" not in index.modules


def test_links_out_of_the_workspace_are_not_indexed(index: PyIndex, tmp_path: Path) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text("def hidden() -> None: ...\n")
    (index.workspace / "geometry" / "leak.py").symlink_to(secret)
    (index.workspace / "geometry" / "alias.py").symlink_to(index.workspace / "geometry" / "cli.py")
    index.refresh()
    assert index.find("hidden") == []
    assert "geometry.alias" in index.modules  # a link that stays inside is an ordinary file


def test_a_file_that_does_not_parse_is_kept_apart(index: PyIndex) -> None:
    (index.workspace / "geometry" / "broken.py").write_text("def oops(:\n")
    index.refresh()
    facts = index.modules["geometry.broken"]
    assert facts.syntax_error is not None and facts.syntax_error.startswith("geometry/broken.py:1")
    assert spots(index, "geometry.core.scale")  # the rest still resolves


def _diag(line: int, message: str, severity: lsp.DiagnosticSeverity) -> lsp.Diagnostic:
    pos = lsp.Position(line=line, character=0)
    return lsp.Diagnostic(range=lsp.Range(start=pos, end=pos), message=message, severity=severity)


def test_new_errors_ignore_moved_lines_and_warnings() -> None:
    error, warning = lsp.DiagnosticSeverity.Error, lsp.DiagnosticSeverity.Warning
    before = [_diag(1, '"a" is not defined', error), _diag(2, "unused", warning)]
    after = [
        _diag(1, '"a" is not defined', error),  # still there: not new
        _diag(6, '"b" is not defined', error),
        _diag(7, '"a" is not defined', error),  # a second one is new
        _diag(8, "other", warning),  # warnings are not reported after edits
    ]
    fresh = new_errors(before, after)
    assert [(d.range.start.line, d.message) for d in fresh] == [
        (6, '"b" is not defined'),
        (7, '"a" is not defined'),
    ]
    moved = [_diag(5, '"a" is not defined', error)]  # the edit moved it down: not new
    assert new_errors(before, moved) == []


def test_baseline_comparison_by_counts() -> None:
    a = Finding("m.py", 3, 1, "error", "bad", "rule")
    b = Finding("m.py", 9, 1, "error", "worse", "rule")
    moved = Finding("m.py", 4, 1, "error", "bad", "rule")
    new, fixed = compare([a, b], [moved, a])
    assert new == [a] and fixed == [b]


def test_the_disk_copy_starts_a_new_process_warm(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURE, root)
    ws, cache = root.resolve(), tmp_path / "cache"
    first = index_for(ws, cache)
    assert first.refresh() == 4
    save_index(first, cache, force=True)
    forget_indexes()
    second = index_for(ws, cache)
    assert second is not first
    assert second.refresh() == 0 and second.scans == 0  # nothing parsed again
    assert second.full_builds == 0  # nor resolved again
    assert spots(second, "geometry.core.scale") == spots(first, "geometry.core.scale")
    # a torn copy is ignored: the index is rebuilt from the files
    next(cache.iterdir()).write_bytes(b"not a pickle")
    forget_indexes()
    third = index_for(ws, cache)
    assert third.refresh() == 4 and third.scans == 4
    forget_indexes()


def test_a_cancelled_refresh_carries_on_next_time(index: PyIndex) -> None:
    report = index.workspace / "geometry" / "report.py"
    report.write_text(report.read_text() + "\n\nHALF = scale(0.5)\n")
    stop = threading.Event()
    stop.set()
    with pytest.raises(CallCancelled):
        index.refresh(stop)
    assert index.refresh() == 1
    assert "geometry/report.py:19" in spots(index, "geometry.core.scale")


def test_super_calls_multiline_imports_and_all_strings(tmp_path: Path) -> None:
    # the uses basedpyright finds on Django that the index missed (bench/codeintel_refs.py):
    # `super().m()` in an override, a name on its own line of `from x import (...)`, `__all__`
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text(
        'from pkg.base import (\n    Base,\n    helper,\n)\n\n__all__ = [\n    "Base",\n]\n'
    )
    (root / "pkg" / "base.py").write_text(
        "class Root:\n    def run(self):\n        return 0\n\n\n"
        "class Base(Root):\n    def run(self):\n        return super().run() + 1\n\n\n"
        "def helper():\n    return super().run()\n"
    )
    (root / "pkg" / "leaf.py").write_text(
        "from pkg.base import Base\n\n\nclass Leaf(Base):\n"
        "    def run(self):\n        return super().run()\n\n"
        "    def other(self):\n        return super().missing()\n"
    )
    ix = PyIndex(root.resolve())
    ix.refresh()
    # Leaf's super().run() is Base.run (the first base that has it), Base's is Root.run
    assert spots(ix, "pkg.base.Base.run") == {"pkg/leaf.py:6"}
    assert spots(ix, "pkg.base.Root.run") == {"pkg/base.py:8"}
    # super() in a plain function, and a name no base has: nothing resolved, nothing invented
    assert [f"{u.file}:{u.line}" for u in ix.unresolved("missing")] == ["pkg/leaf.py:9"]
    assert "pkg/base.py:12" in {f"{u.file}:{u.line}" for u in ix.unresolved("run")}
    assert spots(ix, "pkg.base.helper") == {"pkg/__init__.py:3"}  # its own line
    assert spots(ix, "pkg.base.Base") == {
        "pkg/__init__.py:2",
        "pkg/__init__.py:7",  # "Base" in __all__
        "pkg/leaf.py:1",
        "pkg/leaf.py:4",
    }
