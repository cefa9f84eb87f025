"""Code intelligence on this project's own code: references, blast radius, post-edit diagnostics.

Runs against a copy of the repository's Python sources in a temp dir (the edits must not touch the
checkout), cold (a fresh index / a fresh language server per sample) and warm (kept between
calls), each with a baseline measured in the same run:

1. CodeIntel find-references of `ToolError` and of `run_tool`, vs `Grep` for the same word
   (what a model does without the index).
2. CodeIntel blast-radius of `ToolError` (its transitive dependents), same baseline.
3. Lsp references (basedpyright) on `run_tool`: cold = server start + project load + query.
4. The diagnostics round trip after an edit: FileEdit of a Python file introducing an undefined
   name (the result carries the error), vs FileEdit of a text file of the same size (no server).

5. The repository map against Aider's `RepoMap` on four real trees (Python, TypeScript, Go, Rust;
   `_map_vs_aider.py`, `_corpora.py`): cold build, update after one edit, a new process's first
   map, peak memory. `--map-only` runs this part alone.

p50 of a few samples each (cold samples are few: each one restarts everything). Figures depend on
the machine's load; the closing lines say what was measured on.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import _map_vs_aider
from openmono_contracts import ToolRequest, ToolResult
from openmono_worker import WorkerSettings, run_tool, stop_language_servers
from openmono_worker.codeintel import forget_indexes

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("agent", "services", "scrapling", "tests", "bench", "pyproject.toml")
COLD_N = 3
WARM_N = 15


def p50(samples: list[float]) -> float:
    return statistics.median(samples)


def show(name: str, samples: list[float], base: list[float] | None = None) -> None:
    line = f"{name:46s} p50 {p50(samples):9.1f} ms  (n={len(samples)})"
    if base:
        line += f"  ratio {p50(samples) / p50(base):6.2f}x"
    print(line, flush=True)


def timed(
    fn: Callable[[], ToolResult], n: int, before: Callable[[], None] | None = None
) -> list[float]:
    out = []
    for _ in range(n):
        if before is not None:
            before()
        t = time.perf_counter()
        res = fn()
        out.append((time.perf_counter() - t) * 1000)
        if not res.ok:
            raise SystemExit(f"bench call failed: {res.error}")
    return out


def main() -> None:
    if "--map-only" not in sys.argv:
        tools()
    _map_vs_aider.main()


def tools() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-codeintel-"))
    ws = (tmp / "ws").resolve()
    ws.mkdir()
    ignore = shutil.ignore_patterns(".*", "__pycache__", "node_modules", "*.gguf")
    for name in SOURCES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, ws / name, ignore=ignore)
        elif src.is_file():
            shutil.copy2(src, ws / name)
    files = sum(1 for _ in ws.rglob("*.py"))
    settings = WorkerSettings(data_dir=tmp / "data")
    counter = iter(range(1_000_000))

    def call(tool: str, **params: object) -> ToolResult:
        req = ToolRequest(
            tool=tool,
            params=params,
            call_id=f"b{next(counter)}",
            session_id="bench",
            workspace=str(ws),
            timeout_s=300,
        )
        return run_tool(req, settings=settings)

    def op(tool: str, **params: object) -> Callable[[], ToolResult]:
        return lambda: call(tool, **params)

    def fresh_index() -> None:  # a new process with nothing on disk
        forget_indexes()
        shutil.rmtree(tmp / "data" / "codeintel" / "index", ignore_errors=True)

    def fresh_server() -> None:
        stop_language_servers(ws)

    print(f"workspace: a copy of this repository, {files} Python files", flush=True)
    try:
        grep = timed(op("Grep", pattern=r"\bToolError\b", max_results=1000), WARM_N)
        show("baseline Grep ToolError", grep)
        refs = op(
            "CodeIntel", operation="find-references", symbol="openmono_worker.errors.ToolError"
        )
        show("CodeIntel find-references ToolError, cold", timed(refs, COLD_N, fresh_index), grep)
        show(
            "CodeIntel find-references, new process (disk copy)",
            timed(refs, COLD_N, forget_indexes),
            grep,
        )
        show("CodeIntel find-references ToolError, warm", timed(refs, WARM_N), grep)
        run_refs = op(
            "CodeIntel", operation="find-references", symbol="openmono_worker.runner.run_tool"
        )
        show("CodeIntel find-references run_tool, warm", timed(run_refs, WARM_N), grep)
        edited = ws / "services/worker/src/openmono_worker/workspace.py"

        def touch_body() -> None:  # a body-only edit: one file rescanned, re-resolved
            edited.write_text(edited.read_text() + "\n# bench\n")

        show("CodeIntel find-references, after an edit", timed(refs, WARM_N, touch_body), grep)
        blast = op("CodeIntel", operation="blast-radius", symbol="openmono_worker.errors.ToolError")
        show("CodeIntel blast-radius ToolError, cold", timed(blast, COLD_N, fresh_index), grep)
        show("CodeIntel blast-radius ToolError, warm", timed(blast, WARM_N), grep)

        runner = "services/worker/src/openmono_worker/runner.py"
        line = next(
            i
            for i, t in enumerate((ws / runner).read_text().splitlines(), 1)
            if t.startswith("def run_tool(")
        )
        lsp_refs = op("Lsp", action="references", file_path=runner, line=line, character=5)
        show("Lsp references run_tool, cold server", timed(lsp_refs, COLD_N, fresh_server))
        show("Lsp references run_tool, warm server", timed(lsp_refs, WARM_N))

        target = ws / "services/worker/src/openmono_worker/formatting.py"
        text_twin = ws / "formatting.txt"
        text_twin.write_text(target.read_text())
        marker = "\n\ndef _bench_probe() -> int:\n    return 0\n"
        target.write_text(target.read_text() + marker)
        text_twin.write_text(text_twin.read_text() + marker)
        state = {"broken": False}

        def flip(path: Path) -> Callable[[], ToolResult]:
            def edit() -> ToolResult:
                old, new = (
                    ("return undefined_probe", "return 0")
                    if state["broken"]
                    else ("return 0", "return undefined_probe")
                )
                state["broken"] = not state["broken"]
                res = call(
                    "FileEdit",
                    file_path=os.fspath(path.relative_to(ws)),
                    old_string=old,
                    new_string=new,
                )
                if (
                    path.suffix == ".py"
                    and state["broken"]
                    and '"undefined_probe" is not defined'
                    not in res.output.partition("New errors")[2]
                ):
                    raise SystemExit(f"the edit's result lacks the new error: {res.output[-300:]}")
                return res

            return edit

        def reset() -> None:
            if state["broken"]:  # start each cold sample from the clean text
                flip(target)()
            fresh_server()  # then a new server: the sample pays its start

        base = timed(flip(text_twin), WARM_N)
        show("baseline FileEdit of a .txt file", base)
        show("FileEdit .py + diagnostics, cold server", timed(flip(target), COLD_N, reset), base)
        if state["broken"]:
            flip(target)()
        show("FileEdit .py + diagnostics, warm server", timed(flip(target), WARM_N), base)
    finally:
        stop_language_servers(ws)
        shutil.rmtree(tmp, ignore_errors=True)
    load = os.getloadavg()
    print(
        f"measured on {os.cpu_count()} cores, load average {load[0]:.1f} (shared machine); "
        f"python {sys.version.split()[0]}",
        flush=True,
    )


if __name__ == "__main__":
    main()
