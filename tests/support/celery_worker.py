"""A real tool worker (`python -m openmono_worker`, prefork pool) on a test Redis, in its own group.

`celery_worker(tmp, redis_url, ...)` starts it and waits until it answers a `ping` addressed to its
own node name (Celery's remote control over the same Redis), so a test never races the startup.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from openmono_worker.celery_app import CelerySettings, create_app

from tests.support.procs import Proc, start, wait_until


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
    app = create_app(CelerySettings(broker_url=redis_url))
    try:
        return bool(app.control.ping(destination=[node], timeout=timeout_s))
    finally:
        app.close()


def start_worker(
    tmp: Path,
    redis_url: str,
    *,
    concurrency: int = 2,
    data_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    node: str | None = None,
) -> WorkerProc:
    """Start a worker and wait until its node answers a ping (60 s: cold imports on a busy box)."""
    node = node or f"openmono-test-{uuid.uuid4().hex[:8]}@127.0.0.1"
    full_env = {
        "OPENMONO_BROKER_URL": redis_url,
        "WORKER_CONCURRENCY": str(concurrency),
        "WORKER_DATA_DIR": str(data_dir or tmp / "data"),
        # A lost read-only message comes back within seconds in tests (production: minutes).
        "WORKER_VISIBILITY_TIMEOUT_S": "2",
        "WORKER_RESTORE_INTERVAL_S": "0.5",
        "PYTHONUNBUFFERED": "1",
        **(env or {}),
    }
    cmd = [sys.executable, "-m", "openmono_worker", "--hostname", node, "--loglevel", "INFO"]
    proc = start(cmd, tmp / f"worker-{node.split('@')[0]}-{uuid.uuid4().hex[:4]}.log", full_env)
    worker = WorkerProc(node, proc, redis_url, full_env)
    try:
        wait_until(lambda: ping(redis_url, node), 60, f"celery worker {node}", proc)
    except BaseException:
        proc.stop()
        raise
    return worker


@contextmanager
def celery_worker(tmp: Path, redis_url: str, **kw: object) -> Iterator[WorkerProc]:
    worker = start_worker(tmp, redis_url, **kw)  # type: ignore[arg-type]
    try:
        yield worker
    finally:
        worker.proc.stop()
