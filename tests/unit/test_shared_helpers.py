"""Helpers agent and worker share: the gateway's bearer, its `/services` reader, atomic writes."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest
from openmono_contracts import gateway
from openmono_contracts.atomicfile import atomic_write

from tests.support.httpfake import Reply, Seen, serve


def _services(seen: Seen) -> Reply:
    if seen.path != "/services":
        return Reply(404, b"{}")
    return Reply(200, b'{"llm": true, "search": false, "scrape": true}', "application/json")


def test_read_services_sends_the_bearer_both_ways() -> None:
    with serve(_services) as server:
        info = gateway.read_services_sync(server.url, "k1", timeout_s=5)
        assert (info.llm, info.search, info.scrape) == (True, False, True)

        async def read() -> bool:
            async with gateway.async_client() as client:
                got = await gateway.read_services(client, server.url + "/", "k2", timeout_s=5)
            return got.scrape

        assert asyncio.run(read())
    keys = [s.headers.get("Authorization") for s in server.requests]
    assert keys == ["Bearer k1", "Bearer k2"]
    assert gateway.bearer(None) == {} and gateway.bearer("") == {}


def test_read_services_says_why_it_failed() -> None:
    html = Reply(200, b"<html>not json</html>", "text/html")
    with serve(lambda seen: html) as server, pytest.raises(gateway.ServicesUnreadable) as bad:
        gateway.read_services_sync(server.url, None, timeout_s=5)
    assert "not the capability JSON" in bad.value.reason
    with serve(lambda seen: Reply(401, b"{}")) as server, pytest.raises(gateway.ServicesUnreadable):
        gateway.read_services_sync(server.url, None, timeout_s=5)


def test_gateway_clients_share_one_tls_context() -> None:
    assert gateway.tls_context() is gateway.tls_context()


def test_atomic_write_keeps_or_sets_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "f.txt"
    assert atomic_write(target, "one") is False
    target.chmod(0o640)
    assert atomic_write(target, "two\udcff") is True
    assert target.read_bytes() == b"two\xff"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    atomic_write(target, "secret", mode=0o600)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert os.listdir(target.parent) == ["f.txt"]


def test_atomic_write_leaves_no_temp_file_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        atomic_write(target, "\ud800")  # a lone high surrogate cannot be encoded at all
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["f.txt"]
