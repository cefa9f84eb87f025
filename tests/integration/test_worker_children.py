"""The worker waits for every child it starts: 200 Bash calls through a real worker and Redis.

The calls (tests/support/bash_load.py) leave children behind in every way a command can: a
background child holding the output pipe, a double fork, a `setsid` escape, detached calls, and a
detached call with a child of its own. Pool processes are recycled every 20 calls, so detached jobs
outlive the process that started them. At the end: every result intact (detached ones by their
log and status file), and no worker process (the main one or a pool process) has a zombie child.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import bash_load
from tests.support.celery_worker import celery_worker
from tests.support.redis import redis_server

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_worker_200_bash_calls_leave_no_zombie_and_every_result_intact(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    recycle = {"WORKER_MAX_TASKS_PER_CHILD": "20"}
    with (
        redis_server(tmp_path) as server,
        celery_worker(tmp_path, server.url, env=recycle) as worker,
    ):
        pools_before = set(worker.pool_pids())
        report = bash_load.send(str(ws), 200, broker_url=server.url)
        assert report["bad"] == {}, report
        assert report["detached"] == 50
        # the pool was recycled under the detached jobs (else this tests less than it says)
        assert not pools_before & set(worker.pool_pids())
        found = bash_load.wait_no_zombies([worker.proc.pid], timeout_s=10)
        assert found["count"] == 0, found
        assert len(found["workers"][str(worker.proc.pid)]) >= 2  # main + its pool
