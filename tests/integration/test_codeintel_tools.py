"""Lsp and CodeIntel called the way both executors call them (`run_tool`), real basedpyright.

Confinement (symlinks out are refused like FileRead), clear errors, the server's answers on the
fixture package, diagnostics after FileEdit and ApplyPatch, baselines, and stopping the servers.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from openmono_worker import stop_language_servers
from openmono_worker.codeintel import running_servers

from tests.support.tool_calls import ToolBench, make_bench

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "codeintel" / "python"


@pytest.fixture
def bench(tmp_path: Path) -> Iterator[ToolBench]:
    tb = make_bench(tmp_path)
    shutil.copytree(FIXTURE, tb.ws, dirs_exist_ok=True)
    yield tb
    stop_language_servers(tb.ws)


def test_lsp_refuses_paths_outside_and_files_without_a_server(
    bench: ToolBench, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.py"
    outside.write_text("x = 1\n")
    (bench.ws / "link.py").symlink_to(outside)
    res = bench.call("Lsp", action="hover", file_path="link.py", line=1, character=1)
    assert (
        not res.ok
        and "path refused" in (res.error or "")
        and "outside the workspace" in (res.error or "")
    )
    res = bench.call("Lsp", action="symbols", file_path=str(outside))
    assert not res.ok and "outside the workspace" in (res.error or "")
    bench.write("README.md", "# hi\n")
    res = bench.call("Lsp", action="symbols", file_path="README.md")
    assert not res.ok and (res.error or "").startswith("no language server for README.md")
    res = bench.call("Lsp", action="hover", file_path="geometry/core.py", line=3)
    assert not res.ok and res.error == "hover needs line and character (both 1-based)"
    assert running_servers() == [] or all(s.workspace != bench.ws for s in running_servers())


def test_lsp_answers_on_the_fixture(bench: ToolBench) -> None:
    # report.py line 12: `    return Square(scale(side))`; `scale` starts at column 19
    res = bench.call(
        "Lsp", action="definition", file_path="geometry/report.py", line=12, character=19
    )
    assert res.ok, res.error
    assert res.output.splitlines()[1].startswith("geometry/core.py:30:5: def scale(")
    res = bench.call("Lsp", action="references", file_path="geometry/core.py", line=30, character=5)
    assert res.ok, res.error
    found = {":".join(line.split(":")[:2]) for line in res.output.splitlines()[1:]}
    assert {"geometry/core.py:30", "geometry/report.py:4", "geometry/report.py:12"} <= found
    res = bench.call("Lsp", action="symbols", file_path="geometry/core.py")
    assert res.ok and "class Shape" in res.output and "method area" in res.output
    res = bench.call("Lsp", action="diagnostics", file_path="geometry/core.py")
    assert res.ok and res.output == "geometry/core.py: no errors or warnings"


def test_changes_made_behind_the_servers_back_are_seen(bench: ToolBench) -> None:
    res = bench.call("Lsp", action="diagnostics", file_path="geometry/report.py")
    assert res.ok and res.output == "geometry/report.py: no errors or warnings", res.output
    core = bench.ws / "geometry" / "core.py"  # changed the way Bash or git would
    core.write_text(core.read_text().replace("def scale(", "def rescale("))
    res = bench.call("Lsp", action="diagnostics", file_path="geometry/report.py")
    assert res.ok and '"scale" is unknown import symbol' in res.output, res.output


def test_file_edit_and_apply_patch_report_new_errors(bench: ToolBench) -> None:
    res = bench.call(
        "FileEdit",
        file_path="geometry/core.py",
        old_string="return value * factor",
        new_string="return value * factr",
    )
    assert res.ok, res.error
    assert "New errors in geometry/core.py after this edit (1):" in res.output
    assert 'geometry/core.py:31:20 error: "factr" is not defined' in res.output
    patch = (
        "--- a/geometry/cli.py\n+++ b/geometry/cli.py\n@@ -8,2 +8,2 @@\n"
        " def main() -> None:\n-    print(summary(2.0))\n+    print(sumary(2.0))\n"
    )
    res = bench.call("ApplyPatch", patch=patch)
    assert res.ok, res.error
    assert 'geometry/cli.py:9:11 error: "sumary" is not defined' in res.output
    assert "factr" not in res.output  # only the files this patch wrote
    # a fix reports nothing
    res = bench.call(
        "FileEdit", file_path="geometry/cli.py", old_string="sumary", new_string="summary"
    )
    assert res.ok and "New errors" not in res.output


def test_code_intel_diagnostics_with_a_baseline(bench: ToolBench) -> None:
    res = bench.call("CodeIntel", operation="diagnostics", file_path="geometry/report.py")
    assert res.ok and res.output.startswith("geometry/report.py: 0 errors, 0 warnings"), res.output
    res = bench.call("CodeIntel", operation="capture-baseline", file_path="geometry/report.py")
    assert res.ok and "baseline captured for geometry/report.py" in res.output
    report = bench.ws / "geometry" / "report.py"
    report.write_text(report.read_text() + "\n\nBAD: int = total_area([])  + undefined_thing\n")
    res = bench.call("CodeIntel", operation="diagnostics", file_path="geometry/report.py")
    assert res.ok, res.error
    assert "since the baseline: 1 new, 0 fixed" in res.output
    assert '"undefined_thing" is not defined' in res.output


def test_workspace_diagnostics_through_the_cli(bench: ToolBench) -> None:
    bench.write("geometry/typo.py", "from geometry.core import scale\n\nscale('x')\n")
    res = bench.call("CodeIntel", timeout_s=120, operation="diagnostics")
    assert res.ok, res.error
    assert res.output.startswith("(workspace): 1 errors, 0 warnings"), res.output
    assert "geometry/typo.py:3:7 error:" in res.output


def test_stopping_the_servers_ends_their_processes(bench: ToolBench) -> None:
    res = bench.call("Lsp", action="symbols", file_path="geometry/cli.py")
    assert res.ok, res.error
    [server] = [s for s in running_servers() if s.workspace == bench.ws]
    pid = server.pid
    assert pid is not None
    assert stop_language_servers(bench.ws) == 1
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
