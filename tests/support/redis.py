"""A real `redis-server` (Debian's) on a free loopback port, without persistence, for broker tests.

Skips with a clear reason where `redis-server` is not installed (CI installs it with apt).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis
from openmono.stack.services import REDIS_BOUNDS

from tests.support.procs import Proc, free_port, start, wait_until


@dataclass
class RedisServer:
    port: int
    proc: Proc

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5)

    def ping(self) -> bool:
        try:
            with self.client() as c:
                return bool(c.ping())
        except redis.RedisError:
            return False


def redis_cmd(port: int) -> list[str]:
    """The command line the native stack uses too: loopback only, no RDB, no AOF, its memory
    bound and eviction policy."""
    return [
        "redis-server", "--bind", "127.0.0.1", "--port", str(port),
        "--save", "", "--appendonly", "no", *REDIS_BOUNDS,
    ]  # fmt: skip


def require_redis_server() -> None:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")


def start_redis(tmp: Path, port: int | None = None) -> RedisServer:
    """Start redis on `port` (a free one by default) and wait until it answers PING."""
    require_redis_server()
    port = port or free_port()
    proc = start(redis_cmd(port), tmp / f"redis-{port}.log", cwd=tmp)
    server = RedisServer(port, proc)
    try:
        wait_until(server.ping, 30, f"redis-server on {port}", proc)
    except BaseException:
        proc.stop()
        raise
    return server


@contextmanager
def redis_server(tmp: Path) -> Iterator[RedisServer]:
    server = start_redis(tmp)
    try:
        yield server
    finally:
        server.proc.stop()
