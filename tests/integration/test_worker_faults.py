"""The whole worker or Redis killed in the middle of a call (each test has its own to kill).

- worker SIGKILLed during a Bash call: the agent gets "tool worker lost" long before the call's
  timeout, and no worker ever runs the command again (its claim refuses a redelivery);
- worker SIGKILLed during a read: once a worker is back, the read is answered correctly;
- Redis SIGKILLed during a call: "tool worker unreachable" within seconds, no hang.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from openmono.executor.celery import UNREACHABLE, CeleryExecutor

from tests.support.celery_worker import (
    LOOPBACK_FETCH,
    WorkerProc,
    nothing_left_to_deliver,
    start_worker,
    tool_request,
    wait_for,
)
from tests.support.gated_pages import GatedPages
from tests.support.redis import RedisServer, start_redis
from tests.support.tool_suite import pid_alive

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture
def rds(tmp_path: Path) -> Iterator[RedisServer]:
    server = start_redis(tmp_path)
    yield server
    server.proc.stop()


@pytest.fixture
def worker(tmp_path: Path, rds: RedisServer) -> Iterator[WorkerProc]:
    w = start_worker(tmp_path, rds.url, env=LOOPBACK_FETCH)
    yield w
    w.proc.stop()


@pytest.fixture
async def executor(rds: RedisServer) -> AsyncIterator[CeleryExecutor]:
    ex = CeleryExecutor(rds.url)
    yield ex
    await ex.aclose()


async def test_worker_killed_mid_bash_errors_and_never_reruns(
    tmp_path: Path, rds: RedisServer, worker: WorkerProc, executor: CeleryExecutor
) -> None:
    ws = tmp_path / "ws"
    command = "echo $$ >> runs.log; sleep 3; echo done >> done.log"
    task = asyncio.ensure_future(executor.run(tool_request("Bash", {"command": command}, ws, 60)))
    await wait_for(lambda: (ws / "runs.log").exists(), what="the command to start")
    os.killpg(worker.proc.pid, signal.SIGKILL)  # the whole worker: main and pool processes
    start = time.monotonic()
    result = await asyncio.wait_for(task, 60)
    assert time.monotonic() - start < 20, "the error must come long before the 60 s timeout"
    assert not result.ok and "tool worker lost while running Bash" in (result.error or "")
    # A new worker empties the queue and the unacknowledged set (a message the dead worker had
    # not acknowledged yet comes back after the visibility timeout, and its claim refuses it).
    again = start_worker(tmp_path, rds.url)
    try:
        await wait_for(lambda: nothing_left_to_deliver(rds), 60, "every message to be handled")
        check = await executor.run(tool_request("FileRead", {"file_path": "runs.log"}, ws))
        assert check.ok and "     1\t" in check.output and "     2\t" not in check.output, check
        # The orphaned command (its own session outlives a SIGKILLed worker) ends by itself.
        await wait_for(lambda: (ws / "done.log").exists(), 30, "the orphan to finish")
        assert (ws / "runs.log").read_text().count("\n") == 1
        assert (ws / "done.log").read_text() == "done\n"
    finally:
        again.proc.stop()


async def test_worker_killed_mid_read_answers_after_restart(
    tmp_path: Path, rds: RedisServer, worker: WorkerProc, executor: CeleryExecutor
) -> None:
    pages = GatedPages()
    try:
        call = tool_request("WebFetch", {"url": f"{pages.url}/doc"}, tmp_path / "ws", 60)
        task = asyncio.ensure_future(executor.run(call))
        await asyncio.to_thread(pages.wait_count, 1)  # the read is in flight in the worker
        os.killpg(worker.proc.pid, signal.SIGKILL)
        pages.release.set()
        again = start_worker(tmp_path, rds.url, env=LOOPBACK_FETCH)
        try:
            result = await asyncio.wait_for(task, 90)
        finally:
            again.proc.stop()
    finally:
        pages.close()
    assert result.ok, result
    assert "page /doc" in result.output
    assert pages.count >= 2  # it really was read again


async def test_worker_redis_dies_mid_call(
    tmp_path: Path, rds: RedisServer, worker: WorkerProc, executor: CeleryExecutor
) -> None:
    ws = tmp_path / "ws"
    call = tool_request("Bash", {"command": "echo $$ > sh.pid; sleep 30"}, ws)
    task = asyncio.ensure_future(executor.run(call))
    await wait_for(lambda: (ws / "sh.pid").exists(), what="the command to start")
    rds.proc.popen.send_signal(signal.SIGKILL)
    start = time.monotonic()
    result = await asyncio.wait_for(task, 30)
    assert time.monotonic() - start < 10
    assert not result.ok and (result.error or "").startswith(UNREACHABLE), result
    worker.proc.stop()
    pid = int((ws / "sh.pid").read_text())
    if pid_alive(pid):  # the worker was stopped while its call ran: clean up what it left
        os.killpg(pid, signal.SIGKILL)
