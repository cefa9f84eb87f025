"""A real `redis-server` (Debian's) on a free loopback port, without persistence, for broker tests.

It requires a password, as the stack's does (`requirepass` in a 0600 config file, never on the
command line); `url` carries it, so every client built from the URL logs in.

Skips with a clear reason where `redis-server` is not installed (CI installs it with apt).
"""

from __future__ import annotations

import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis
from openmono.config import write_private
from openmono.stack.services import REDIS_BOUNDS

from tests.support.procs import Proc, free_port, start, wait_until


@dataclass
class RedisServer:
    port: int
    proc: Proc
    password: str = ""

    @property
    def url(self) -> str:
        login = f":{self.password}@" if self.password else ""
        return f"redis://{login}127.0.0.1:{self.port}/0"

    @property
    def bare_url(self) -> str:
        """The URL without the password (what an operator configures; clients add it)."""
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self, db: int = 0) -> redis.Redis:
        return redis.Redis(
            host="127.0.0.1",
            port=self.port,
            db=db,
            password=self.password or None,
            socket_timeout=5,
        )

    def ping(self) -> bool:
        try:
            with self.client() as c:
                return bool(c.ping())
        except redis.RedisError:
            return False


def redis_cmd(port: int, config: Path) -> list[str]:
    """The command line the native stack uses too: its config file (the password), loopback
    only, no RDB, no AOF, its memory bound and eviction policy."""
    return [
        "redis-server", str(config), "--bind", "127.0.0.1", "--port", str(port),
        "--save", "", "--appendonly", "no", *REDIS_BOUNDS,
    ]  # fmt: skip


def require_redis_server() -> None:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")


def start_redis(tmp: Path, port: int | None = None, password: str | None = None) -> RedisServer:
    """Start redis on `port` (a free one by default) with `password` (a new one by default) and
    wait until it answers PING."""
    require_redis_server()
    port = port or free_port()
    password = password or secrets.token_urlsafe(16)
    config = tmp / f"redis-{port}.conf"
    write_private(config, f'requirepass "{password}"\n')
    proc = start(redis_cmd(port, config), tmp / f"redis-{port}.log", cwd=tmp)
    server = RedisServer(port, proc, password)
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
