"""The dispatcher's prepare stage is six named steps that compose: insert, drop, reorder."""

from __future__ import annotations

import asyncio
from pathlib import Path

from openmono.executor import LocalExecutor
from openmono.llm import ToolCallComplete
from openmono.loop import (
    PREPARE_STEPS,
    CallOutcome,
    DispatchContext,
    Dispatcher,
    LoopEvent,
    Pending,
    Refusal,
    Step,
    ToolCatalog,
)
from openmono.permissions import PermissionEngine
from openmono_worker import WorkerSettings


def _dispatch(tmp_path: Path, calls: list[ToolCallComplete], steps: tuple[Step, ...]) -> list[str]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "a.txt").write_text("alpha\n")
    executor = LocalExecutor(WorkerSettings(data_dir=tmp_path / "data"))
    ctx = DispatchContext(workspace=ws, session_id="s", timeout_s=30)
    dispatcher = Dispatcher(
        executor, ToolCatalog.from_worker(), PermissionEngine(ws), ctx, steps=steps
    )
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
    assert names == ["parse", "validate", "workspace", "mode", "permissions", "pre_hooks"]


def test_a_step_can_be_inserted_and_one_dropped(tmp_path: Path) -> None:
    async def no_secrets(_d: Dispatcher, p: Pending) -> Refusal | None:
        # runs after `validate`, so the arguments are parsed and the facts known
        assert p.facts.read_only
        if "secret" in str(p.args.get("file_path")):
            return Refusal("secrets are not read here", denied=True)
        return None

    steps = (*PREPARE_STEPS[:3], Step("no_secrets", no_secrets), *PREPARE_STEPS[3:])
    first, second = _dispatch(tmp_path, [_read("1", "secret.txt"), _read("2", "a.txt")], steps)
    assert first == "Error: secrets are not read here"
    assert "alpha" in second
    # without the workspace step, the worker's own guard still refuses the escape
    no_workspace = tuple(s for s in PREPARE_STEPS if s.name != "workspace")
    (escaped,) = _dispatch(tmp_path, [_read("3", "/etc/hostname")], no_workspace)
    assert escaped.startswith("Error:") and "outside" in escaped.lower()
    (refused,) = _dispatch(tmp_path, [_read("4", "/etc/hostname")], PREPARE_STEPS)
    assert refused.startswith("Error: path refused")
