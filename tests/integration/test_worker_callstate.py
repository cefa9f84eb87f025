"""The claim script against a real Redis: who may run a call, and who must not."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from openmono_worker.callstate import ABANDONED, alive_key, claim, claim_key

from tests.support.redis import redis_server

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[redis.Redis]:
    with redis_server(tmp_path_factory.mktemp("callstate")) as server, server.client() as c:
        yield c


@pytest.mark.parametrize("read_only", [True, False])
def test_worker_claim_first_then_duplicate(client: redis.Redis, read_only: bool) -> None:
    task = f"t-first-{read_only}"
    assert claim(client, task, read_only=read_only) == "first"
    assert client.get(claim_key(task)) and client.pttl(alive_key(task)) > 0
    # Its process is alive (heartbeat key present): a second delivery must not run it.
    assert claim(client, task, read_only=read_only) == "duplicate"


def test_worker_claim_after_a_lost_process(client: redis.Redis) -> None:
    for task in ("t-read", "t-write"):
        assert claim(client, task, read_only=task == "t-read") == "first"
        client.delete(alive_key(task))  # the process died: its heartbeat expired
    assert claim(client, "t-read", read_only=True) == "redelivered"
    assert client.pttl(alive_key("t-read")) > 0  # the new run beats
    assert claim(client, "t-write", read_only=False) == "taken"
    assert not client.exists(alive_key("t-write"))


@pytest.mark.parametrize("read_only", [True, False])
def test_worker_claim_abandoned(client: redis.Redis, read_only: bool) -> None:
    task = f"t-abandoned-{read_only}"
    client.set(claim_key(task), ABANDONED)
    assert claim(client, task, read_only=read_only) == "abandoned"
    assert client.get(claim_key(task)) == ABANDONED.encode()


def test_worker_claim_needs_no_leftovers(tmp_path: Path, client: redis.Redis) -> None:
    # The keys expire: nothing a call leaves behind lives forever.
    assert claim(client, "t-ttl", read_only=False) == "first"
    assert 0 < client.ttl(claim_key("t-ttl")) <= 6 * 3600
    assert 0 < client.pttl(alive_key("t-ttl")) <= 5000
