"""The dispatcher's prepare stage is six named steps that compose: insert, drop, reorder; the
arguments and paths are checked once, where the tool runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from openmono.executor import LocalExecutor
from openmono.llm import ToolCallComplete, ToolSpec
from openmono.loop import (
    PREPARE_STEPS,
    CallOutcome,
    DispatchContext,
    Dispatcher,
    EventSink,
    LoopEvent,
    OfferedTool,
    Pending,
    Refusal,
    Step,
    StepContext,
    ToolCatalog,
    ToolFinished,
    WorkerTools,
)
from openmono.permissions import PermissionEngine
from openmono.sessions import Snapshots
from openmono_contracts import ToolErrorKind, ToolRequest, ToolResult
from openmono_contracts.toolfacts import ToolFacts
from openmono_worker import WorkerSettings


def _dispatch(
    tmp_path: Path,
    calls: list[ToolCallComplete],
    steps: tuple[Step, ...] = PREPARE_STEPS,
    yolo: bool = False,
) -> list[str]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "a.txt").write_text("alpha\n")
    executor = LocalExecutor(WorkerSettings(data_dir=tmp_path / "data"))
    ctx = DispatchContext(workspace=ws, session_id="s", timeout_s=30)
    permissions = PermissionEngine(ws, yolo=yolo)
    dispatcher = Dispatcher(ToolCatalog([WorkerTools(executor)]), permissions, ctx, steps=steps)
    out: list[CallOutcome] = []
    events: list[LoopEvent] = []

    async def run() -> None:
        try:
            await dispatcher.run(calls, "agent", "t1", events.append, out.append)
        finally:
            await executor.aclose()

    asyncio.run(run())
    return [o.content for o in out]


def _read(call_id: str, path: str) -> ToolCallComplete:
    return ToolCallComplete(
        index=0, id=call_id, name="FileRead", arguments=f'{{"file_path": "{path}"}}'
    )


def test_the_six_steps_by_name() -> None:
    names = [s.name for s in PREPARE_STEPS]
    assert names == ["parse", "lookup", "mode", "read_only_task", "permissions", "pre_hooks"]


def test_a_step_can_be_inserted_and_one_dropped(tmp_path: Path) -> None:
    async def no_secrets(_c: StepContext, p: Pending) -> Refusal | None:
        # runs after `lookup`, so the arguments are parsed and the facts known
        assert p.facts.read_only
        if "secret" in str(p.args.get("file_path")):
            return Refusal("secrets are not read here", denied=True)
        return None

    steps = (*PREPARE_STEPS[:2], Step("no_secrets", no_secrets), *PREPARE_STEPS[2:])
    first, second = _dispatch(tmp_path, [_read("1", "secret.txt"), _read("2", "a.txt")], steps)
    assert first == "Error: secrets are not read here"
    assert "alpha" in second
    # without the permission step, a read outside the workspace is refused where the tool runs
    unchecked = tuple(s for s in PREPARE_STEPS if s.name != "permissions")
    (escaped,) = _dispatch(tmp_path, [_read("3", "/etc/hostname")], unchecked)
    assert escaped.startswith("Error: path refused") and "outside" in escaped.lower()
    (asked,) = _dispatch(tmp_path, [_read("4", "/etc/hostname")])
    assert asked.startswith("Error: permission denied: reading outside the workspace")


def test_arguments_and_paths_are_checked_once_where_the_tool_runs(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    link = tmp_path / "ws" / "link.txt"
    link.parent.mkdir()
    link.symlink_to(outside)
    calls = [
        ToolCallComplete(index=0, id="1", name="FileRead", arguments='{"limit": 3}'),
        ToolCallComplete(index=1, id="2", name="FileWrite", arguments='{"file_path": "b.txt"}'),
        _read("3", "link.txt"),
        ToolCallComplete(index=3, id="4", name="Nope", arguments="{}"),
    ]
    missing, half, linked, unknown = _dispatch(tmp_path, calls, yolo=True)
    # one corrective message each, in the worker's own words
    assert missing == "Error: invalid parameters for FileRead: file_path: Field required"
    assert half == "Error: invalid parameters for FileWrite: content: Field required"
    assert linked.startswith("Error: path refused") and "secret" not in linked
    assert unknown.startswith("Error: unknown tool 'Nope'; known tools: ") and "FileRead" in unknown


def test_undo_snapshots_only_files_inside_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "escape.txt").write_text("outside")
    snapshots = Snapshots(tmp_path / "snaps")
    executor = LocalExecutor(WorkerSettings(data_dir=tmp_path / "data"))
    ctx = DispatchContext(workspace=ws, session_id="s", timeout_s=30)
    dispatcher = Dispatcher(
        ToolCatalog([WorkerTools(executor)]),
        PermissionEngine(ws, yolo=True),
        ctx,
        snapshots=snapshots,
    )
    out: list[CallOutcome] = []

    def write(call_id: str, path: str) -> ToolCallComplete:
        args = json.dumps({"file_path": path, "content": "new"})
        return ToolCallComplete(index=0, id=call_id, name="FileWrite", arguments=args)

    async def run() -> None:
        try:
            calls = [write("1", "../escape.txt"), write("2", "in.txt")]
            await dispatcher.run(calls, "agent", "t1", lambda _e: None, out.append)
        finally:
            await executor.aclose()

    asyncio.run(run())
    assert out[0].content.startswith("Error: path refused") and out[1].ok
    assert (tmp_path / "escape.txt").read_text() == "outside"
    assert snapshots.undo() == [(ws / "in.txt").resolve()]
    assert not (ws / "in.txt").exists()


def test_the_sessions_own_outputs_are_readable_without_approval(tmp_path: Path) -> None:
    """A spilled output and a background log live outside the workspace; the result tells the
    model to FileRead them, so a non-interactive run must not deny that read. Other files
    outside the workspace still need approval."""
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = WorkerSettings(data_dir=tmp_path / "data", artifact_threshold_bytes=1024)
    executor = LocalExecutor(settings)
    ctx = DispatchContext(workspace=ws, session_id="s", timeout_s=30)
    dispatcher = Dispatcher(
        ToolCatalog([WorkerTools(executor)]), PermissionEngine(ws, allow=("Bash",)), ctx
    )

    def bash(call_id: str, command: str, background: bool = False) -> ToolCallComplete:
        args = json.dumps({"command": command, "background": background})
        return ToolCallComplete(index=0, id=call_id, name="Bash", arguments=args)

    artifacts: dict[str, str] = {}

    def note(event: LoopEvent) -> None:
        if isinstance(event, ToolFinished) and event.artifact:
            artifacts[event.call_id] = event.artifact

    async def turn(*calls: ToolCallComplete) -> list[CallOutcome]:
        out: list[CallOutcome] = []
        await dispatcher.run(list(calls), "agent", "t", note, out.append)
        return out

    async def run() -> list[str]:
        try:
            spilled, started = await turn(bash("1", "seq 1 5000"), bash("2", "echo up", True))
            artifact, log = artifacts["1"], artifacts["2"]
            assert artifact in spilled.content and f"log: {log}" in started.content
            assert not Path(artifact).is_relative_to(ws) and not Path(log).is_relative_to(ws)
            outside = tmp_path / "elsewhere.txt"
            outside.write_text("not ours\n")
            reads = await turn(_read("3", artifact), _read("4", log), _read("5", str(outside)))
            return [o.content for o in reads]
        finally:
            await executor.aclose()

    artifact_read, log_read, other = asyncio.run(run())
    assert "permission denied" not in artifact_read and "of 5001" in artifact_read
    assert "permission denied" not in log_read
    assert "permission denied" in other and "not ours" not in other


class _Worded:
    """A toolset whose failures say their kind in words of their own (no worker prefix)."""

    def tools(self) -> dict[str, OfferedTool]:
        spec = ToolSpec(name="Odd", parameters={"type": "object", "properties": {}})
        return {"Odd": OfferedTool(spec, ToolFacts())}

    async def call(self, request: ToolRequest, emit: EventSink) -> ToolResult:
        kind: ToolErrorKind = request.params["kind"]
        return ToolResult(call_id=request.call_id, ok=False, error="no good", error_kind=kind)


def test_a_bad_call_is_told_by_the_results_kind_not_its_wording(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = DispatchContext(workspace=ws, session_id="s", timeout_s=30)
    dispatcher = Dispatcher(ToolCatalog([_Worded()]), PermissionEngine(ws, yolo=True), ctx)
    events: list[LoopEvent] = []
    kinds = ["invalid_params", "unknown_tool", "failed", "denied"]
    calls = [
        ToolCallComplete(index=i, id=str(i), name="Odd", arguments=json.dumps({"kind": k}))
        for i, k in enumerate(kinds)
    ]
    asyncio.run(dispatcher.run(calls, "agent", "t", events.append, lambda _o: None))
    problems = [e.problem for e in events if isinstance(e, ToolFinished)]
    assert problems == ["invalid", "unknown_tool", None, None]
