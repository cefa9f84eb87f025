"""The Celery executor against one real Redis and one real prefork worker (concurrency 2).

1. The agent core's tool suite: every case runs on the same workspace path and data dir through
   `LocalExecutor` and through `CeleryExecutor`; the two results must be equal field for field
   except `elapsed_ms` (artifacts: same file, same bytes, in the shared data dir).
2. What only a separate worker can get wrong: cancellation, parallel reads across processes,
   ordered writes, the soft time limit, a pool process killed mid-call, the redelivery guard, no
   Redis / no worker at all.

Slow read-only calls are `WebFetch` calls to `GatedPages` on 127.0.0.1, so "in the middle of a
read" and "at the same time" are facts the page server observed, not timings.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import stat
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from openmono.executor import Executor, LocalExecutor, select_executor
from openmono.executor.celery import UNREACHABLE, CeleryExecutor
from openmono_contracts import Route, ToolResult
from openmono_contracts.routing import ensure_workspace_id
from openmono_worker import WorkerSettings
from openmono_worker.callstate import ABANDONED, alive_key, claim_key
from openmono_worker.celery_app import TASK_NAME, create_app

from tests.support.celery_worker import (
    LOOPBACK_FETCH,
    WorkerStack,
    claim_holder,
    nothing_left_to_deliver,
    tool_request,
    wait_for,
    worker_stack,
)
from tests.support.gated_pages import GatedPages
from tests.support.procs import free_port
from tests.support.redis import redis_server
from tests.support.tool_suite import (
    CASES,
    ToolCase,
    check_cancel,
    check_parallel_reads,
    pid_alive,
    run_case,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerStack]:
    with worker_stack(tmp_path_factory.mktemp("worker"), env=LOOPBACK_FETCH) as s:
        yield s


@pytest.fixture
async def celery_ex(stack: WorkerStack) -> AsyncIterator[CeleryExecutor]:
    ex = CeleryExecutor(stack.redis.url)
    yield ex
    await ex.aclose()


@pytest.fixture
async def local_ex(stack: WorkerStack) -> AsyncIterator[LocalExecutor]:
    ex = LocalExecutor(WorkerSettings(data_dir=stack.data_dir))
    yield ex
    await ex.aclose()


@pytest.fixture
def pages() -> Iterator[GatedPages]:
    p = GatedPages()
    yield p
    p.close()


# --- 1. the tool suite, byte for byte -------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_worker_suite_case_same_as_local(
    case: ToolCase,
    celery_ex: CeleryExecutor,
    local_ex: LocalExecutor,
    stack: WorkerStack,
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    local = await run_case(local_ex, case, ws)
    local_artifact = Path(local.artifact).read_bytes() if local.artifact else None
    shutil.rmtree(ws)
    shutil.rmtree(tmp_path / "ws-outside", ignore_errors=True)
    remote = await run_case(celery_ex, case, ws)
    assert remote.model_dump(exclude={"elapsed_ms"}) == local.model_dump(exclude={"elapsed_ms"})
    if remote.artifact:
        # Shared data dir: the worker wrote the whole output where the agent reads it.
        assert Path(remote.artifact).is_relative_to(stack.data_dir)
        assert Path(remote.artifact).read_bytes() == local_artifact


async def test_worker_celery_executor_is_an_executor(celery_ex: CeleryExecutor) -> None:
    assert isinstance(celery_ex, Executor)


async def test_worker_results_come_through_one_pattern_subscription(
    stack: WorkerStack, tmp_path: Path
) -> None:
    # Celery's send_task also SUBSCRIBEs to each task's channel (and UNSUBSCRIBEs when its result
    # object is dropped) on a connection nobody reads here; the executor's calls do neither.
    def subscribes() -> int:
        stats = stack.redis.client().info("commandstats")
        return int(stats.get("cmdstat_subscribe", {}).get("calls", 0))

    ex = CeleryExecutor(stack.redis.url)
    try:
        await ex.run(tool_request("ListDirectory", {}, tmp_path / "ws"))  # the PSUBSCRIBE is made
        before = subscribes()
        for _ in range(3):
            result = await ex.run(tool_request("ListDirectory", {}, tmp_path / "ws"))
            assert result.ok, result
        assert subscribes() == before
    finally:
        await ex.aclose()


async def test_worker_cancel_kills_the_process_group(
    celery_ex: CeleryExecutor, tmp_path: Path
) -> None:
    took = await check_cancel(celery_ex, tmp_path / "ws")
    assert took < 10


async def test_worker_cancelling_the_awaiting_task_revokes_the_call(
    celery_ex: CeleryExecutor, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    call = tool_request("Bash", {"command": "sleep 60 & echo $! > child.pid; wait"}, ws)
    task = asyncio.ensure_future(celery_ex.run(call))
    await wait_for(lambda: (ws / "child.pid").exists() and (ws / "child.pid").read_text() != "")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    pid = int((ws / "child.pid").read_text())
    await wait_for(lambda: not Path(f"/proc/{pid}").exists(), 10, "the revoked call's child to die")


async def test_worker_parallel_reads(celery_ex: CeleryExecutor, tmp_path: Path) -> None:
    await check_parallel_reads(celery_ex, tmp_path / "ws")


# --- 2. parallel reads, ordered writes, time limits -----------------------------------------------


async def test_worker_read_only_calls_overlap_across_processes(
    celery_ex: CeleryExecutor, tmp_path: Path
) -> None:
    pages = GatedPages(barrier=2)
    try:
        calls = [
            tool_request("WebFetch", {"url": f"{pages.url}/p{i}"}, tmp_path / "ws") for i in (1, 2)
        ]
        results = await asyncio.wait_for(asyncio.gather(*(celery_ex.run(c) for c in calls)), 120)
    finally:
        pages.close()
    # Each page answered only once both requests were in flight: two pool processes at once.
    for i, r in enumerate(results, start=1):
        assert r.ok and f"page /p{i} together=True" in r.output, r
    assert pages.max_in_flight == 2


async def test_worker_writes_keep_their_order(celery_ex: CeleryExecutor, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for i in range(6):
        r = await celery_ex.run(tool_request("FileEdit" if i else "FileWrite", _step(i), ws))
        assert r.ok, r
    assert (ws / "order.txt").read_text() == "0 1 2 3 4 5"


def _step(i: int) -> dict[str, object]:
    if i == 0:
        return {"file_path": "order.txt", "content": "0"}
    prev = " ".join(str(n) for n in range(i))
    return {"file_path": "order.txt", "old_string": prev, "new_string": f"{prev} {i}"}


async def test_worker_soft_time_limit_stops_a_stuck_read(
    celery_ex: CeleryExecutor, tmp_path: Path, pages: GatedPages
) -> None:
    start = time.monotonic()
    call = tool_request("WebFetch", {"url": f"{pages.url}/stuck"}, tmp_path / "ws", timeout_s=2)
    result = await asyncio.wait_for(celery_ex.run(call), 60)
    took = time.monotonic() - start
    assert not result.ok and "timed out" in (result.error or ""), result
    # soft limit 2 s, plus at most the 2 s grace for the tool's own answer: before the hard kill
    assert took < 2 + 5, took
    # The pool process survived: the next call is answered.
    after = await celery_ex.run(tool_request("FileRead", {"file_path": "nope"}, tmp_path / "ws"))
    assert after.error is not None and "not found" in after.error


# --- 3. a pool process killed mid-call -------------------------------------------------------


async def test_worker_pool_process_killed_mid_bash_errors_once(
    celery_ex: CeleryExecutor, stack: WorkerStack, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    call = tool_request("Bash", {"command": "echo $$ >> runs.log; sleep 60"}, ws, 120)
    task = asyncio.ensure_future(celery_ex.run(call))
    await wait_for(lambda: (ws / "runs.log").exists(), what="the command to start")
    task_id = celery_ex.running_task_id(call.call_id)
    assert task_id is not None
    os.kill(claim_holder(stack.redis, task_id), signal.SIGKILL)
    start = time.monotonic()
    result = await asyncio.wait_for(task, 60)
    assert time.monotonic() - start < 10, "an error long before the 120 s timeout"
    assert not result.ok and "tool worker lost while running Bash" in (result.error or "")
    await wait_for(lambda: nothing_left_to_deliver(stack.redis), 30, "the queue to empty")
    assert (ws / "runs.log").read_text().count("\n") == 1
    os.killpg(int((ws / "runs.log").read_text()), signal.SIGKILL)  # its orphaned `sleep`


async def test_worker_pool_process_killed_mid_read_is_redelivered(
    celery_ex: CeleryExecutor, stack: WorkerStack, tmp_path: Path, pages: GatedPages
) -> None:
    call = tool_request("WebFetch", {"url": f"{pages.url}/doc"}, tmp_path / "ws", 60)
    task = asyncio.ensure_future(celery_ex.run(call))
    await asyncio.to_thread(pages.wait_count, 1)  # the read is in flight in a pool process
    task_id = celery_ex.running_task_id(call.call_id)
    assert task_id is not None
    os.kill(claim_holder(stack.redis, task_id), signal.SIGKILL)
    pages.release.set()
    result = await asyncio.wait_for(task, 60)
    assert result.ok and "page /doc" in result.output, result
    assert pages.count == 2  # read twice: once by the dead process, once after redelivery


async def test_worker_box_mode_refuses_a_call_for_another_box(
    stack: WorkerStack, tmp_path: Path
) -> None:
    """A worker without WORKER_WORKSPACES runs this box's calls only: a forged box id is refused."""
    app = create_app(WorkerSettings(broker_url=stack.redis.url))
    ws = tmp_path / "ws"
    req = tool_request("FileWrite", {"file_path": "x.txt", "content": "x"}, ws)
    assert req.route is not None and req.route.kind == "box"
    other_box = Route(kind="box", id="0" * 24)
    forged = req.model_copy(update={"route": other_box})
    try:
        # On this box's queue, as if another box's agent had picked the wrong queue.
        res = app.send_task(TASK_NAME, args=[forged.model_dump()], queue=req.route.queue)
        result = ToolResult.model_validate(await asyncio.to_thread(res.get, timeout=60))
    finally:
        app.close()
    assert not result.ok and "refused by tool worker" in (result.error or ""), result
    assert not (ws / "x.txt").exists()


async def test_worker_marked_workspace_beside_a_box_worker_says_what_to_do(
    stack: WorkerStack, tmp_path: Path
) -> None:
    """An id file (say, from a compose run) routes past this box's worker: the error says why."""
    ws = tmp_path / "marked"
    ws.mkdir()
    ensure_workspace_id(ws)
    ex = CeleryExecutor(stack.redis.url, pickup_timeout_s=1.0)
    try:
        result = await ex.run(tool_request("FileWrite", {"file_path": "x", "content": "x"}, ws))
    finally:
        await ex.aclose()
    assert not result.ok and "no tool worker serves workspace" in (result.error or ""), result
    assert f"delete {ws}/.openmono/workspace-id" in (result.error or ""), result
    assert not (ws / "x").exists()


# --- 4. the redelivery guard (claim keys) ---------------------------------------------------------


async def test_worker_redelivered_side_effect_is_refused(
    stack: WorkerStack, tmp_path: Path
) -> None:
    """A second delivery of a side-effecting message whose process died never runs the tool."""
    app = create_app(WorkerSettings(broker_url=stack.redis.url))
    ws = tmp_path / "ws"
    req = tool_request("Bash", {"command": "echo ran >> effects.log"}, ws)
    payload = req.model_dump()
    assert req.route is not None

    def send(task_id: str) -> ToolResult:
        # A fresh app per send: Celery's result backend caches a finished task's result by id,
        # and a second `get` of the same id could answer from that cache instead of the worker.
        sender = create_app(WorkerSettings(broker_url=stack.redis.url))
        try:
            res = sender.send_task(
                TASK_NAME, args=[payload], task_id=task_id, queue=req.route.queue
            )
            return ToolResult.model_validate(res.get(timeout=60))
        finally:
            sender.close()

    try:
        task_id = f"dup-{uuid.uuid4().hex}"
        first = await asyncio.to_thread(send, task_id)
        assert first.ok, first
        with stack.redis.client() as c:
            c.delete(alive_key(task_id), f"celery-task-meta-{task_id}")  # its process is gone
        second = await asyncio.to_thread(send, task_id)
        assert not second.ok and "never run twice" in (second.error or ""), second
        assert (ws / "effects.log").read_text() == "ran\n"

        # A call the agent abandoned before any process took it does not run either.
        abandoned = f"abandoned-{uuid.uuid4().hex}"
        with stack.redis.client() as c:
            c.set(claim_key(abandoned), ABANDONED)
        third = await asyncio.to_thread(send, abandoned)
        assert third.error == "cancelled"
        assert (ws / "effects.log").read_text() == "ran\n"
    finally:
        app.close()


# --- 5. no Redis, no worker ---------------------------------------------------------------------


async def test_worker_unreachable_without_redis(tmp_path: Path) -> None:
    settings = SimpleNamespace(
        broker_url=f"redis://127.0.0.1:{free_port()}/0", data_dir=tmp_path / "data"
    )
    ex = select_executor(settings)
    assert isinstance(ex, CeleryExecutor)  # a broker is configured: never the local executor
    try:
        start = time.monotonic()
        call = tool_request("Bash", {"command": "touch ran-somewhere"}, tmp_path / "ws")
        result = await asyncio.wait_for(ex.run(call), 30)
        took = time.monotonic() - start
    finally:
        await ex.aclose()
    assert not result.ok and (result.error or "").startswith(UNREACHABLE), result
    assert took < 10, took
    # No silent local fallback: the command never ran anywhere.
    assert not (tmp_path / "ws" / "ran-somewhere").exists()


async def test_worker_none_running(tmp_path: Path) -> None:
    with redis_server(tmp_path) as server:
        ex = CeleryExecutor(server.url, pickup_timeout_s=1.0)
        try:
            start = time.monotonic()
            call = tool_request("Bash", {"command": "touch ran-somewhere"}, tmp_path / "ws")
            result = await asyncio.wait_for(ex.run(call), 60)
            took = time.monotonic() - start
        finally:
            await ex.aclose()
        assert not result.ok and (result.error or "").startswith(UNREACHABLE), result
        assert "no worker answered" in (result.error or "")
        assert took < 15, took
        # The call was abandoned through its claim: a worker that starts later refuses it.
        with server.client() as c:
            claims = [c.get(k) for k in c.keys("openmono:call:*:claim")]
        assert claims == [ABANDONED.encode()]
    assert not (tmp_path / "ws" / "ran-somewhere").exists()


async def test_worker_hard_time_limit_kills_a_stuck_call_and_its_group(
    celery_ex: CeleryExecutor, stack: WorkerStack, tmp_path: Path
) -> None:
    """A pool process that stops responding (SIGSTOP: no soft-limit handler can run) is killed at
    the hard limit (timeout + 5 s), and the command it started in its own session dies first."""
    ws = tmp_path / "ws"
    call = tool_request("Bash", {"command": "sleep 60 & echo $! > child.pid; wait"}, ws, 2)
    task = asyncio.ensure_future(celery_ex.run(call))
    await wait_for(lambda: (ws / "child.pid").exists() and (ws / "child.pid").read_text() != "")
    task_id = celery_ex.running_task_id(call.call_id)
    assert task_id is not None
    holder = claim_holder(stack.redis, task_id)
    child = int((ws / "child.pid").read_text())
    os.kill(holder, signal.SIGSTOP)
    try:
        result = await asyncio.wait_for(task, 60)
        assert not result.ok, result
        # Whether the heartbeat (5 s) or the hard limit (7 s) told the agent first, the worker's
        # main process kills the stuck call's process group and the pool process.
        await wait_for(lambda: not pid_alive(child), 30, "the stuck call's command to die")
        await wait_for(lambda: not pid_alive(holder), 30, "the stuck pool process to die")
        await wait_for(lambda: task_id in _hard_limit_lines(stack), 10, "the hard limit's log")
    finally:
        if pid_alive(holder):
            os.kill(holder, signal.SIGCONT)
    after = await celery_ex.run(tool_request("FileRead", {"file_path": "child.pid"}, ws))
    assert after.ok, after  # the pool was refilled


def _hard_limit_lines(stack: WorkerStack) -> str:
    return "\n".join(
        line for line in stack.worker.proc.output().splitlines() if "Hard time limit" in line
    )


async def test_worker_logs_a_fetched_url_without_its_token(
    celery_ex: CeleryExecutor, stack: WorkerStack, tmp_path: Path, pages: GatedPages
) -> None:
    """Issue 36 finding 11 (tests/security/test_data_dir_modes.py has the rest): the worker's log
    (httpx names every request it makes) shows a fetched URL without its query; the data dir the
    worker was started on is 0700."""
    pages.release.set()
    secret = "wf-s3cr3t-T0KEN"
    url = f"{pages.url}/doc?token={secret}&sig={secret}#{secret}"
    result = await celery_ex.run(tool_request("WebFetch", {"url": url}, tmp_path / "ws", 60))
    assert result.ok, result
    log = stack.worker.proc.output()
    assert "/doc" in log and secret not in log and "token=" not in log
    assert stat.S_IMODE(stack.data_dir.stat().st_mode) == 0o700
