"""The worker's bound on concurrent tools (`WORKER_CONCURRENCY`), through the agent's executor.

At most `concurrency` calls run at once; the others wait in their Redis queue, in order, and all
complete (nothing lost). A call that waits longer than the executor's queue timeout is answered
with an error saying the workers are busy, and is abandoned: it never runs later, when a pool
process frees up.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from openmono.executor.celery import CeleryExecutor
from openmono_contracts import ToolRequest

from tests.support.celery_worker import worker_stack

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# Each call records when it started and ended (its own files), and holds its pool process a while.
TIMED = 'date +%s.%N > "{i}.start"; sleep {s}; date +%s.%N > "{i}.end"; echo "call {i}"'


def _bash(ws: Path, i: int, seconds: float, call_id: str | None = None) -> ToolRequest:
    return ToolRequest(
        tool="Bash",
        params={"command": TIMED.format(i=i, s=seconds)},
        call_id=call_id or f"bound-{i}",
        session_id="bounds",
        workspace=str(ws),
        timeout_s=60,
    )


def _most_at_once(ws: Path, calls: range) -> int:
    spans = [
        (float((ws / f"{i}.start").read_text()), float((ws / f"{i}.end").read_text()))
        for i in calls
    ]
    return max(sum(1 for s, e in spans if s <= start < e) for start, _ in spans)


async def test_worker_runs_at_most_its_concurrency_and_queues_the_rest(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with worker_stack(tmp_path, concurrency=2) as stack:
        ex = CeleryExecutor(stack.redis.url)
        try:
            results = await asyncio.gather(*(ex.run(_bash(ws, i, 1.0)) for i in range(6)))
        finally:
            await ex.aclose()
    assert [r.output for r in results] == [f"call {i}\n[exit code 0]" for i in range(6)]
    assert _most_at_once(ws, range(6)) == 2


async def test_a_call_queued_past_the_queue_timeout_is_refused_and_never_runs(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with worker_stack(tmp_path, concurrency=1) as stack:
        ex = CeleryExecutor(stack.redis.url, pickup_timeout_s=0.5, queue_timeout_s=1.5)
        try:
            holder = asyncio.ensure_future(ex.run(_bash(ws, 0, 4.0)))
            while not (ws / "0.start").exists():
                await asyncio.sleep(0.02)
            started = time.monotonic()
            queued = await ex.run(_bash(ws, 1, 0.0))
            waited = time.monotonic() - started
            assert not queued.ok and "no tool worker picked the call up" in (queued.error or "")
            assert "all busy or stuck" in (queued.error or "") and waited < 10
            assert (await holder).ok
            # the pool process is free now: the abandoned call is refused, not run
            after = await ex.run(_bash(ws, 2, 0.0))
            assert after.ok
        finally:
            await ex.aclose()
    assert not (ws / "1.start").exists()
