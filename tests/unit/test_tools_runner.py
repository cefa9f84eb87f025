"""`run_tool` and the registry: errors as results, JSON purity, specs from pydantic, artifacts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openmono_contracts import ToolRequest, ToolResult
from openmono_worker import WorkerSettings, run_tool, tool_specs
from openmono_worker.artifacts import artifact_path, spill
from openmono_worker.tools import registry

from tests.support.tool_calls import ToolBench, make_bench

EXPECTED_PARAMS = {
    "FileRead": ["file_path", "offset", "limit"],
    "FileWrite": ["file_path", "content"],
    "FileEdit": ["file_path", "old_string", "new_string", "replace_all", "edits"],
    "ApplyPatch": ["patch", "dry_run"],
    "Glob": ["pattern", "path"],
    "Grep": ["pattern", "path", "glob", "case_insensitive", "context_lines", "max_results"],
    "ListDirectory": ["path", "recursive", "max_entries"],
    "Bash": ["command", "timeout_ms", "background"],
}
REQUIRED = {
    "FileRead": ["file_path"],
    "FileWrite": ["content", "file_path"],
    "FileEdit": ["file_path"],
    "ApplyPatch": ["patch"],
    "Glob": ["pattern"],
    "Grep": ["pattern"],
    "Bash": ["command"],
}


@pytest.fixture
def tb(tmp_path: Path) -> ToolBench:
    return make_bench(tmp_path)


def test_specs_have_design_names_and_params() -> None:
    specs = {s["name"]: s for s in tool_specs()}
    for name, params in EXPECTED_PARAMS.items():
        spec = specs[name]
        assert list(spec["parameters"].get("properties", {})) == params, name
        required = sorted(spec["parameters"].get("required", []))
        assert required == REQUIRED.get(name, []), name
        assert spec["description"] and isinstance(spec["facts"]["read_only"], bool)
    assert json.loads(json.dumps(tool_specs())) == tool_specs()  # plain JSON, stable


def test_flags() -> None:
    specs = {s["name"]: s for s in tool_specs()}
    for name in ("FileRead", "Glob", "Grep", "ListDirectory"):
        assert specs[name]["facts"]["read_only"] and specs[name]["facts"]["concurrency_safe"], name
    for name in ("FileWrite", "FileEdit", "ApplyPatch", "Bash"):
        assert (
            not specs[name]["facts"]["read_only"] and not specs[name]["facts"]["concurrency_safe"]
        ), name


def test_registry_is_sorted_and_read_only() -> None:
    names = list(registry())
    assert names == sorted(names)
    with pytest.raises(TypeError):
        registry()["X"] = registry()["Bash"]  # type: ignore[index]


def test_unknown_tool_lists_known_ones(tb: ToolBench) -> None:
    r = tb.call("Nope")
    assert not r.ok and "unknown tool 'Nope'" in (r.error or "") and "FileRead" in (r.error or "")
    assert r.error_kind == "unknown_tool"


def test_invalid_params_are_listed(tb: ToolBench) -> None:
    r = tb.call("Grep", pattern="", context_lines=-1, bogus=1)
    err = r.error or ""
    assert not r.ok and err.startswith("invalid parameters for Grep:")
    assert "pattern:" in err and "context_lines:" in err and "bogus: Extra inputs" in err
    assert "https://" not in err
    assert r.error_kind == "invalid_params"


def test_each_failure_says_its_kind(tb: ToolBench, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("secret\n")
    refused = tb.call("FileRead", file_path="../outside.txt")
    failed = tb.call("FileRead", file_path="missing.txt")
    timed_out = tb.call("Bash", command="sleep 5", timeout_ms=100)
    assert [r.error_kind for r in (refused, failed, timed_out)] == ["denied", "failed", "timeout"]
    assert tb.call("Glob", pattern="*").error_kind is None  # ok: no kind


def test_bad_workspace_is_a_result(tmp_path: Path) -> None:
    req = ToolRequest(
        tool="FileRead",
        params={"file_path": "a"},
        call_id="c",
        session_id="s",
        workspace=str(tmp_path / "missing"),
    )
    r = run_tool(req, settings=WorkerSettings(data_dir=tmp_path))
    assert not r.ok and "workspace" in (r.error or "")


def test_result_round_trips_through_json(tb: ToolBench) -> None:
    tb.write("a.txt", "x\n")
    for r in (
        tb.call("FileRead", file_path="a.txt"),
        tb.call("Glob", pattern="*.txt"),
        tb.call("Nope"),
    ):
        wire = r.model_dump_json()
        assert ToolResult.model_validate_json(wire) == r
        assert json.loads(wire)["call_id"] == r.call_id


def test_same_request_same_result(tb: ToolBench) -> None:
    tb.write("a.txt", "x\ny\n")
    req = ToolRequest(
        tool="Grep", params={"pattern": "y"}, call_id="c", session_id="s", workspace=str(tb.ws)
    )
    one = run_tool(req, settings=tb.settings).model_dump(exclude={"elapsed_ms"})
    two = run_tool(req, settings=tb.settings).model_dump(exclude={"elapsed_ms"})
    assert one == two


def test_cancelled_before_start(tb: ToolBench) -> None:
    import threading

    flag = threading.Event()
    flag.set()
    req = ToolRequest(
        tool="Bash", params={"command": "touch ran"}, call_id="c", session_id="s",
        workspace=str(tb.ws),
    )  # fmt: skip
    r = run_tool(req, cancel=flag, settings=tb.settings)
    assert not r.ok and r.error == "cancelled" and not (tb.ws / "ran").exists()


# --- artifacts ----------------------------------------------------------------------------------


def test_small_output_is_not_spilled(tmp_path: Path) -> None:
    assert spill("x" * 100, WorkerSettings(data_dir=tmp_path), "s", "c") is None


def test_spill_writes_whole_output_and_shows_head_and_tail(tmp_path: Path) -> None:
    settings = WorkerSettings(data_dir=tmp_path)
    text = "".join(f"row {i}\n" for i in range(5000))
    spilled = spill(text, settings, "sess", "call/../evil")
    assert spilled is not None and spilled.artifact is not None
    path = Path(spilled.artifact)
    assert path == artifact_path(settings, "sess", "call/../evil")
    assert path.parent == tmp_path / "artifacts" / "sess"  # ids cannot climb out
    assert path.read_text() == text
    assert spilled.text.startswith("row 0\n") and spilled.text.rstrip().endswith("row 4999")
    assert len(spilled.text.encode()) < 10 * 1024 and str(path) in spilled.text


def test_artifact_dir_is_configurable(tmp_path: Path) -> None:
    settings = WorkerSettings(data_dir=tmp_path / "data", artifact_dir=tmp_path / "arts")
    spilled = spill("y\n" * 10_000, settings, "s", "c")
    assert spilled is not None and spilled.artifact == str(tmp_path / "arts" / "s" / "c.txt")


def test_settings_read_the_shared_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENMONO_DATA_DIR", str(tmp_path / "shared"))
    monkeypatch.delenv("WORKER_DATA_DIR", raising=False)
    assert WorkerSettings().artifacts_root == tmp_path / "shared" / "artifacts"
    monkeypatch.setenv("WORKER_DATA_DIR", str(tmp_path / "own"))
    assert WorkerSettings().data_dir == tmp_path / "own"


def test_artifact_is_readable_with_file_read(tb: ToolBench) -> None:
    big = tb.call("Bash", command="seq 1 20000")
    assert big.artifact and big.truncated
    page = tb.call("FileRead", file_path=big.artifact, offset=15000, limit=2)
    assert page.ok and page.output.startswith(" 15000\t15000\n 15001\t15001")
