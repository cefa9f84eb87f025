"""A real tool worker (`python -m openmono_worker`, prefork pool) on a test Redis, in its own group.

`celery_worker(tmp, redis_url, ...)` starts it and waits until it answers a `ping` addressed to its
own node name (Celery's remote control over the same Redis), so a test never races the startup.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openmono.executor.celery import CeleryExecutor
from openmono_contracts import ToolRequest
from openmono_contracts.routing import route_for
from openmono_worker import WorkerSettings
from openmono_worker.callstate import ABANDONED, claim_key
from openmono_worker.celery_app import create_app

from tests.support.procs import Proc, start, wait_until
from tests.support.redis import RedisServer, redis_server


@dataclass
class WorkerProc:
    node: str
    proc: Proc
    redis_url: str
    env: dict[str, str] = field(default_factory=dict)

    def pool_pids(self) -> list[int]:
        """The pool processes (children of the main worker process)."""
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        return [int(p) for p in children.read_text().split()] if children.exists() else []


def ping(redis_url: str, node: str, timeout_s: float = 1.0) -> bool:
    app = create_app(WorkerSettings(broker_url=redis_url))
    try:
        return bool(app.control.ping(destination=[node], timeout=timeout_s))
    finally:
        app.close()


def launch_worker(
    tmp: Path,
    redis_url: str,
    *,
    concurrency: int = 2,
    data_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    node: str | None = None,
    launcher: Sequence[str] = (),
) -> WorkerProc:
    """Start a worker without waiting for it (`await_worker` does), so several start at once.
    `launcher`: a command the worker runs under (e.g. `tests/support/no_landlock.py`)."""
    node = node or f"openmono-test-{uuid.uuid4().hex[:8]}@127.0.0.1"
    full_env = {
        "OPENMONO_BROKER_URL": redis_url,
        "WORKER_CONCURRENCY": str(concurrency),
        "WORKER_DATA_DIR": str(data_dir or tmp / "data"),
        # A lost read-only message comes back within seconds in tests (production: minutes).
        "WORKER_VISIBILITY_TIMEOUT_S": "5",
        "WORKER_RESTORE_INTERVAL_S": "0.5",
        # box mode runs calls inside its roots only: the tests' workspaces live under the temp dir
        "WORKER_ROOTS": tempfile.gettempdir(),
        "PYTHONUNBUFFERED": "1",
        **(env or {}),
    }
    cmd = [*launcher, sys.executable, "-m", "openmono_worker", "--hostname", node]
    cmd += ["--loglevel", "INFO"]
    # A lone test worker has no neighbours to sync with: skip the 1 s mingle round.
    cmd += ["--without-mingle", "--without-gossip"]
    proc = start(cmd, tmp / f"worker-{node.split('@')[0]}-{uuid.uuid4().hex[:4]}.log", full_env)
    return WorkerProc(node, proc, redis_url, full_env)


def await_worker(worker: WorkerProc) -> None:
    """Wait until the worker's node answers a ping (60 s: cold imports on a busy box)."""
    node, url = worker.node, worker.redis_url
    wait_until(lambda: ping(url, node), 60, f"celery worker {node}", worker.proc)


def start_worker(tmp: Path, redis_url: str, **kw: Any) -> WorkerProc:
    """Start a worker (`launch_worker`'s arguments) and wait until its node answers a ping."""
    worker = launch_worker(tmp, redis_url, **kw)
    try:
        await_worker(worker)
    except BaseException:
        worker.proc.stop()
        raise
    return worker


@contextmanager
def celery_worker(tmp: Path, redis_url: str, **kw: object) -> Iterator[WorkerProc]:
    worker = start_worker(tmp, redis_url, **kw)  # type: ignore[arg-type]
    try:
        yield worker
    finally:
        worker.proc.stop()


@dataclass
class WorkerStack:
    """Redis + one worker for a test module; `data_dir` is shared with local executors."""

    redis: RedisServer
    worker: WorkerProc
    data_dir: Path


@contextmanager
def worker_stack(
    tmp: Path, concurrency: int = 2, env: Mapping[str, str] | None = None
) -> Iterator[WorkerStack]:
    data_dir = tmp / "data"
    with (
        redis_server(tmp) as server,
        celery_worker(
            tmp, server.url, concurrency=concurrency, data_dir=data_dir, env=env
        ) as worker,
    ):
        yield WorkerStack(server, worker, data_dir)


@asynccontextmanager
async def celery_executor(redis_url: str, **kw: Any) -> AsyncIterator[CeleryExecutor]:
    """The agent's Celery executor on `redis_url`, closed at the end."""
    ex = CeleryExecutor(redis_url, **kw)
    try:
        yield ex
    finally:
        await ex.aclose()


# --- helpers for tests that poke at a running call ----------------------------------------------

# Lets the worker's direct WebFetch reach the tests' loopback page servers (never set in prod).
LOOPBACK_FETCH = {"WORKER_WEB_FETCH_ALLOW_CIDRS": "127.0.0.0/8"}


def tool_request(
    tool: str, params: dict[str, object], ws: Path, timeout_s: float = 60
) -> ToolRequest:
    """A request as the Celery executor sends it (routed), for tests that send tasks themselves."""
    ws.mkdir(parents=True, exist_ok=True)
    return ToolRequest(
        tool=tool,
        params=params,
        call_id=f"c-{uuid.uuid4().hex[:8]}",
        session_id="worker-tests",
        workspace=str(ws),
        timeout_s=timeout_s,
        route=route_for(ws),
    )


async def wait_for(check: Callable[[], bool], timeout_s: float = 60, what: str = "it") -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


def claim_holder(server: RedisServer, task_id: str) -> int:
    """The pid of the pool process that claimed `task_id` (see openmono_worker.callstate)."""
    with server.client() as c:
        holder = c.get(claim_key(task_id))
    assert holder is not None and holder != ABANDONED.encode(), holder
    return int(holder.decode().rsplit(":", 1)[1])


def nothing_left_to_deliver(server: RedisServer) -> bool:
    """No queued and no unacknowledged message: nothing can ever be delivered again."""
    with server.client() as c:
        queued = sum(c.llen(k) for k in c.keys("openmono.tools*"))
        return queued == 0 and c.hlen("unacked") == 0
