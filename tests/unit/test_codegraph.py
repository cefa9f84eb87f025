"""The code graph (`openmono_worker.codegraph`): extraction and resolution per language, the
bounds of the walk, the content-hash cache's incrementality, and the ranked map.

Real tree-sitter grammars on the fixture projects (`tests/fixtures/codeintel/<lang>/`), copied to
a temporary workspace; no language server.
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from openmono_worker import CallCancelled
from openmono_worker.codegraph import (
    MAX_FILE_BYTES,
    CodeGraph,
    Mapper,
    blast_radius,
    estimate_tokens,
    find_references,
    forget_graphs,
    graph_for,
    save_graph,
    spec_for,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "codeintel"
LANGS = ("python", "ts", "js", "go", "rust", "java", "c", "cpp", "csharp", "ruby", "php")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    shutil.copytree(FIXTURES, root)
    return root


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> CodeGraph:
    """One graph for the tests that only read it."""
    root = (tmp_path_factory.mktemp("graph") / "ws").resolve()
    shutil.copytree(FIXTURES, root)
    g = CodeGraph(root)
    g.refresh()
    return g


def defs(g: CodeGraph, rel: str) -> set[tuple[str, str]]:
    return {(d.qname, d.kind) for d in g.tags[rel].defs}


# Each language: a definition per kind the query knows, with its owner.
DEFINITIONS = {
    "python/geometry/core.py": {
        ("Shape", "class"),
        ("Shape.area", "method"),
        ("scale", "function"),
    },
    "ts/src/geometry.ts": {
        ("Shape", "interface"),
        ("Circle", "class"),
        ("Circle.area", "method"),
        ("Named", "type"),
        ("Kind", "enum"),
        ("totalArea", "function"),
        ("UNIT", "constant"),
    },
    "ts/src/view.tsx": {("CircleView", "function")},
    "js/lib/math.js": {
        ("square", "function"),
        ("Counter", "class"),
        ("Counter.increment", "method"),
    },
    "go/geometry/geometry.go": {
        ("Shape", "interface"),
        ("Circle", "struct"),
        ("Circle.Area", "method"),  # the receiver owns it
        ("Total", "function"),
    },
    "rust/src/geometry.rs": {
        ("Shape", "trait"),
        ("Circle", "struct"),
        ("Circle.area", "method"),  # from `impl Shape for Circle`
        ("total", "function"),
        ("Kind", "enum"),
        ("UNIT", "constant"),
    },
    "java/src/main/java/com/example/geometry/Circle.java": {
        ("Circle", "class"),
        ("Circle.area", "method"),
    },
    "c/geometry.h": {("circle", "struct"), ("circle_t", "type"), ("circle_area", "function")},
    "c/geometry.c": {("square", "function"), ("circle_area", "function")},
    "cpp/shapes.hpp": {
        ("shapes", "module"),
        ("shapes.Circle", "class"),
        ("shapes.Circle.area", "method"),
    },
    "cpp/shapes.cpp": {("Circle.area", "method")},  # defined out of class: Circle::area
    "csharp/Geometry.cs": {("IShape", "interface"), ("Circle", "class"), ("Circle.Area", "method")},
    "ruby/lib/geometry.rb": {
        ("Geometry", "module"),
        ("Geometry.Circle", "class"),
        ("Geometry.Circle.area", "method"),
    },
    "php/src/Geometry/Circle.php": {
        ("Shape", "interface"),
        ("Circle", "class"),
        ("Circle.area", "method"),
        ("total", "function"),
    },
}


@pytest.mark.parametrize("rel", sorted(DEFINITIONS))
def test_definitions_per_language(graph: CodeGraph, rel: str) -> None:
    assert DEFINITIONS[rel] <= defs(graph, rel)


def test_every_language_is_indexed(graph: CodeGraph) -> None:
    langs = {t.lang for t in graph.tags.values()}
    assert langs == {
        "python", "typescript", "tsx", "javascript", "go", "rust", "java", "c", "cpp",
        "csharp", "ruby", "php",
    }  # fmt: skip
    assert not graph.skipped


def test_signatures_and_lines(graph: CodeGraph) -> None:
    total = next(d for d in graph.tags["go/geometry/geometry.go"].defs if d.name == "Total")
    assert (total.line, total.start, total.end) == (22, 22, 28)
    assert total.signature == "func Total(shapes []Shape) float64 {"


# (file, name) -> (files it resolves to, confidence): one import form per language at least.
RESOLVED = {
    ("python/geometry/report.py", "Square"): (["python/geometry/core.py"], "import"),
    ("ts/src/app.ts", "Circle"): (["ts/src/geometry.ts"], "import"),  # named import
    ("ts/src/app.ts", "show"): (["ts/src/format.ts"], "import"),  # import * as format
    # totalArea is defined in format.ts too, but app.ts imports it from geometry by name
    ("ts/src/app.ts", "totalArea"): (["ts/src/geometry.ts"], "import"),
    ("ts/src/view.tsx", "show"): (["ts/src/format.ts"], "import"),  # tsx sees ts
    ("js/index.js", "square"): (["js/lib/math.js"], "import"),  # require + destructuring
    ("go/main.go", "Scale"): (["go/geometry/scale.go"], "import"),  # module path from go.mod
    ("go/geometry/scale.go", "Circle"): (["go/geometry/geometry.go"], "import"),  # same package
    ("rust/src/main.rs", "total"): (["rust/src/geometry.rs"], "import"),  # use crate_name::…
    ("rust/src/lib.rs", "Circle"): (["rust/src/geometry.rs"], "import"),  # mod + pub use
    ("java/src/main/java/com/example/app/App.java", "Circle"): (
        ["java/src/main/java/com/example/geometry/Circle.java"],
        "import",
    ),
    ("java/src/main/java/com/example/geometry/Circle.java", "Shape"): (
        ["java/src/main/java/com/example/geometry/Shape.java"],
        "import",  # same package, no import
    ),
    # the header, and its implementation beside it
    ("c/main.c", "circle_area"): (["c/geometry.c", "c/geometry.h"], "import"),
    ("cpp/main.cpp", "Shape"): (["cpp/shapes.hpp"], "import"),
    ("csharp/Program.cs", "Circle"): (["csharp/Geometry.cs"], "import"),  # using Shapes;
    ("ruby/app.rb", "Circle"): (["ruby/lib/geometry.rb"], "import"),  # require_relative
    ("php/src/main.php", "Circle"): (["php/src/Geometry/Circle.php"], "import"),  # use A\B\C
}


@pytest.mark.parametrize("key", sorted(RESOLVED))
def test_resolution_per_language(graph: CodeGraph, key: tuple[str, str]) -> None:
    assert graph.resolve(*key) == RESOLVED[key]


def test_unimported_same_name_is_only_a_name_match(ws: Path) -> None:
    (ws / "ts/src/stray.ts").write_text("export function helper() { return show(1); }\n")
    g = CodeGraph(ws)
    g.refresh()
    assert g.resolve("ts/src/stray.ts", "show") == (["ts/src/format.ts"], "name")
    assert g.out_edges["ts/src/stray.ts"][("ts/src/format.ts", "show")][1] == "name"
    # and never across languages: Go's `Area` is not a TypeScript name
    (ws / "ts/src/other.ts").write_text("export const x = Area();\n")
    g.refresh()
    assert g.resolve("ts/src/other.ts", "Area") == ([], "")


# -- bounds ------------------------------------------------------------------------------------


def test_bad_inputs_are_skipped_with_a_reason(ws: Path) -> None:
    (ws / "big.py").write_bytes(b"x = 1\n" * (MAX_FILE_BYTES // 6 + 10))
    (ws / "blob.c").write_bytes(b"\x7fELF\x00\x00binary")
    (ws / "app.min.js").write_text("function a(){}")
    for name in ("node_modules", "vendor", "target", "dist", ".git"):
        (ws / name).mkdir(exist_ok=True)
        (ws / name / "dep.js").write_text("export function dep() {}\n")
    (ws / "loop").mkdir()
    (ws / "loop" / "again").symlink_to(ws / "loop")  # a directory link loop
    outside = ws.parent / "secret.py"
    outside.write_text("def secret(): pass\n")
    (ws / "leak.py").symlink_to(outside)
    (ws / "broken.py").write_text("def (((:\n  class\n")
    g = CodeGraph(ws)
    g.refresh()
    reasons = {s.path: s.reason for s in g.skipped}
    assert reasons["big.py"] == "over 1024 KiB"
    assert reasons["blob.c"] == "binary"
    assert reasons["app.min.js"] == "minified bundle"
    assert reasons["leak.py"] == "link to a file outside the workspace"
    assert not [f for f in g.tags if f.split("/")[0] in ("node_modules", "vendor", "dist")]
    assert not [f for f in g.tags if "loop/" in f or ".git" in f]
    assert g.tags["broken.py"].errors  # parsed with recovery, flagged, not a crash
    assert not any(d.name == "secret" for _f, d in g.defs())


def test_a_folder_linked_from_outside_stays_out_of_the_graph_and_the_map(ws: Path) -> None:
    outside = ws.parent / "elsewhere"
    outside.mkdir()
    (outside / "stolen.py").write_text("def stolen_secret(): pass\n")
    (ws / "linked").symlink_to(outside, target_is_directory=True)
    g = CodeGraph(ws)
    g.refresh()
    assert not [f for f in g.tags if f.startswith("linked")]
    assert "stolen" not in Mapper(g).build(4096, ["linked/stolen.py"], "stolen_secret").text


def test_a_parse_that_runs_past_its_deadline_stops_and_the_parser_is_reusable() -> None:
    from openmono_worker.codegraph._extract import ParseTimeout, parse

    spec = spec_for("big.py")
    assert spec is not None
    data = b"".join(b"def f%d(a, b):\n    return [a + b for _ in range(%d)]\n" % (i, i)
                    for i in range(20_000))  # fmt: skip
    with pytest.raises(ParseTimeout):
        parse(spec, data, deadline_s=0.0)
    assert parse(spec, b"def ok(): pass\n").root_node.type == "module"


def test_file_count_is_bounded(tmp_path: Path) -> None:
    for i in range(30):
        (tmp_path / f"m{i:02}.py").write_text(f"def f{i}(): pass\n")
    g = CodeGraph(tmp_path, max_files=10)
    g.refresh()
    assert len(g.tags) == 10
    assert g.truncated == "stopped at 10 source files"


def test_refresh_can_be_cancelled_and_resumes(ws: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    g = CodeGraph(ws)
    with pytest.raises(CallCancelled):
        g.refresh(cancel)
    assert g.refresh()  # carries on


# -- incrementality ----------------------------------------------------------------------------


def test_only_changed_content_is_parsed_again(ws: Path) -> None:
    g = CodeGraph(ws)
    g.refresh()
    cold = g.parses
    assert g.refresh() == set() and g.parses == cold  # nothing moved: nothing read
    path = ws / "go/geometry/scale.go"
    before = path.read_text()
    os.utime(path, ns=(1, 1))  # touched, same content: hashed, not parsed
    assert g.refresh() == set() and g.parses == cold
    path.write_text(before + "\nfunc Shrink(c Circle) Circle { return Scale(c, 0.5) }\n")
    assert g.refresh() == {"go/geometry/scale.go"}
    assert g.parses == cold + 1 and g.full_builds == 1  # one parse, no rebuild
    assert g.resolve("go/main.go", "Scale") == (["go/geometry/scale.go"], "import")
    assert "Shrink" in g.defs_by_name["go"]
    path.write_text(before)  # back to content already seen: no parse
    assert g.refresh() == {"go/geometry/scale.go"} and g.parses == cold + 1
    assert "Shrink" not in {d.name for d in g.tags["go/geometry/scale.go"].defs}


def test_a_new_definition_relinks_its_users(ws: Path) -> None:
    g = CodeGraph(ws)
    g.refresh()
    (ws / "ts/src/app.ts").write_text(
        (ws / "ts/src/app.ts").read_text() + "\nexport const later = shout(1);\n"
    )
    g.refresh()
    assert g.resolve("ts/src/app.ts", "shout") == ([], "")
    fmt = ws / "ts/src/format.ts"
    fmt.write_text(fmt.read_text() + "\nexport function shout(v: number) { return v; }\n")
    g.refresh()
    assert ("ts/src/format.ts", "shout") in g.out_edges["ts/src/app.ts"]  # app.ts re-linked
    (ws / "ts/src/format.ts").unlink()
    g.refresh()
    assert not [e for e in g.out_edges["ts/src/app.ts"] if e[0] == "ts/src/format.ts"]


def test_disk_copy_saves_the_next_process_every_parse(ws: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    forget_graphs()
    g, _ = graph_for(ws, cache)
    g.refresh()
    save_graph(g, cache, force=True)
    forget_graphs()
    again, _ = graph_for(ws, cache)
    again.refresh()
    assert again.parses == 0 and set(again.tags) == set(g.tags)
    assert again.resolve("ts/src/app.ts", "Circle") == (["ts/src/geometry.ts"], "import")
    forget_graphs()
    for f in cache.iterdir():
        f.write_bytes(b"torn")
    torn, _ = graph_for(ws, cache)
    torn.refresh()  # an unreadable copy is ignored, the graph is built again
    assert torn.parses == len(torn.tags)
    forget_graphs()


# -- the map -----------------------------------------------------------------------------------


def test_map_fits_the_budget_and_follows_what_is_in_play(graph: CodeGraph) -> None:
    m = Mapper(graph)
    small = m.build(60, [])
    assert 0 < estimate_tokens(small.text) <= 60
    big = m.build(2000, [])
    assert big.defs_shown > small.defs_shown
    assert m.build(0, []).text == ""
    focused = m.build(80, ["go/geometry/scale.go"])
    assert focused.text.splitlines()[0].startswith("go/")
    named = m.build(80, [], "please rename CircleView")
    assert "CircleView" in named.text
    assert "│" in named.text and named.files_total == len(graph.tags)


def test_map_is_refreshed_when_files_change(ws: Path) -> None:
    g = CodeGraph(ws)
    g.refresh()
    m = Mapper(g)
    first = m.build(120, [], "totalArea")
    assert m.build(120, [], "totalArea") is first  # nothing changed: the same map
    (ws / "ts/src/geometry.ts").write_text(
        (ws / "ts/src/geometry.ts").read_text().replace("totalArea", "sumOfAreas")
    )
    g.refresh()
    after = m.build(120, [], "sumOfAreas")
    assert "sumOfAreas" in after.text and "function sumOfAreas" not in first.text


def test_pagerank_runs_again_only_when_the_edges_move(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import openmono_worker.codegraph._map as mapping

    runs: list[int] = []
    real = mapping.pagerank

    def counted(*args: Any, **kwargs: Any) -> Any:
        runs.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(mapping, "pagerank", counted)
    g = CodeGraph(ws)
    g.refresh()
    m = Mapper(g)
    m.build(400, [])
    app = ws / "ts/src/app.ts"
    app.write_text(app.read_text() + "\nexport function unusedHelper(): number { return 1; }\n")
    g.refresh()
    assert "unusedHelper" in m.build(4000, []).text  # the new definition is mapped
    assert len(runs) == 1  # on the last ranks: the same edges, the same restart
    app.write_text(app.read_text() + "\nconst more = totalArea([new Circle(3)]);\n")
    g.refresh()
    m.build(400, [])
    assert len(runs) == 2  # a use more: the edge's weight moved


def test_jsdoc_links_and_types_are_documentation_uses(tmp_path: Path) -> None:
    # TypeScript's server counts these as references of Shape (bench/codeintel_refs.py on rxjs)
    ws = (tmp_path / "ws").resolve()
    (ws / "src").mkdir(parents=True)
    (ws / "src/shape.ts").write_text("export class Shape {\n  area(): number { return 0; }\n}\n")
    (ws / "src/use.ts").write_text(
        "import { Shape } from './shape';\n"
        "/**\n"
        " * Like {@link Shape}, see {@link Shape#area the area}.\n"
        " * @param {Array<Shape>} all the shapes\n"
        " * @returns {number} the sum; not {@link Other}\n"
        " */\n"
        "export function total(all: Shape[]): number {\n"
        "  /* {@link Shape} in a plain comment is prose */\n"
        "  return all.length;\n"
        "}\n"
    )
    g = CodeGraph(ws)
    g.refresh()
    target = ("src/shape.ts", next(d for d in g.tags["src/shape.ts"].defs if d.name == "Shape"))
    refs = find_references(g, target)
    assert "src/use.ts:3:16 doc in (top level)" in refs
    assert "src/use.ts:3:35 doc" in refs
    assert "src/use.ts:4:18 doc" in refs
    assert "src/use.ts:7:" in refs and "src/use.ts:8:" not in refs  # code use; plain comment
    assert "5 references" in refs  # the import, three in the doc comment, the parameter type
    # documentation is not a dependent: only total (through its parameter's type) is
    radius = blast_radius(g, target)
    assert "1 dependents" in radius and "src/use.ts:7" in radius
