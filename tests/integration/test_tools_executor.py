"""The shared tool suite through the local executor, plus cancellation and executor selection."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from openmono.executor import (
    Executor,
    ExecutorUnavailable,
    LocalExecutor,
    select_executor,
)
from openmono_contracts import ToolRequest
from openmono_worker import WorkerSettings

from tests.support.tool_suite import (
    CASES,
    ToolCase,
    check_cancel,
    check_parallel_reads,
    pid_alive,
    run_case,
)

pytestmark = pytest.mark.integration


@pytest.fixture
async def executor(tmp_path: Path) -> AsyncIterator[LocalExecutor]:
    ex = LocalExecutor(WorkerSettings(data_dir=tmp_path / "data"))
    yield ex
    await ex.aclose()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_suite_case(executor: LocalExecutor, case: ToolCase, tmp_path: Path) -> None:
    await run_case(executor, case, tmp_path / "ws")


async def test_local_executor_is_an_executor(executor: LocalExecutor) -> None:
    assert isinstance(executor, Executor)


async def test_cancel_kills_the_process_group(executor: LocalExecutor, tmp_path: Path) -> None:
    took = await check_cancel(executor, tmp_path / "ws")
    assert took < 5


async def test_parallel_reads(executor: LocalExecutor, tmp_path: Path) -> None:
    await check_parallel_reads(executor, tmp_path / "ws")


async def test_cancelling_the_awaiting_task_stops_the_call(
    executor: LocalExecutor, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    req = ToolRequest(
        tool="Bash",
        params={"command": "echo $$ > bash.pid; sleep 60"},
        call_id="c-task",
        session_id="s",
        workspace=str(ws),
    )
    task = asyncio.ensure_future(executor.run(req))
    deadline = time.monotonic() + 30
    while not (ws / "bash.pid").exists() or not (ws / "bash.pid").read_text().strip():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    pid = int((ws / "bash.pid").read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # `run` only re-raises once the tool thread finished, so the group is already dead.
    assert not pid_alive(pid)


async def test_cancel_of_unknown_call_is_ignored(executor: LocalExecutor) -> None:
    await executor.cancel("never-started")


async def test_closed_executor_refuses(tmp_path: Path) -> None:
    ex = LocalExecutor(WorkerSettings(data_dir=tmp_path))
    await ex.aclose()
    req = ToolRequest(
        tool="ListDirectory",
        params={},
        call_id="c",
        session_id="s",
        workspace=str(tmp_path),
    )
    result = await ex.run(req)
    assert not result.ok and "closed" in (result.error or "")


async def test_select_executor_local_without_broker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENMONO_BROKER_URL", raising=False)
    ex = select_executor(SimpleNamespace(broker_url=None, data_dir=tmp_path))
    try:
        assert isinstance(ex, LocalExecutor)
    finally:
        await ex.aclose()


def test_select_executor_never_falls_back_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A broker URL with the Celery executor unavailable must be an error, not a local run.
    import sys

    monkeypatch.setitem(sys.modules, "openmono.executor.celery", None)
    with pytest.raises(ExecutorUnavailable, match="OPENMONO_BROKER_URL"):
        select_executor(SimpleNamespace(broker_url="redis://127.0.0.1:1/0", data_dir=tmp_path))


async def test_select_executor_picks_celery_with_a_broker(tmp_path: Path) -> None:
    from openmono.config import Settings
    from openmono.executor.celery import CeleryExecutor

    settings = Settings(broker_url="redis://127.0.0.1:1/0", data_dir=tmp_path)
    ex = select_executor(settings)
    try:
        assert isinstance(ex, CeleryExecutor)
    finally:
        await ex.aclose()
