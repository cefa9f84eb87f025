"""The key store (openmono_keys): names, hashes, snippets, mistakes, usage records, rate limits."""

from __future__ import annotations

import base64
import gzip
import json
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import bcrypt
import pytest
from openmono_contracts.gatewaykeys import AccessRecord
from openmono_keys import (
    KeyStore,
    NameInvalid,
    NameTaken,
    NameUnknown,
    StoreUnreadable,
    ValueInvalid,
)
from openmono_keys import caddy as snippets
from openmono_keys.keyformat import lookup_prefix
from openmono_keys.ratelimit import RateLimiter
from openmono_keys.store import parse_rate
from openmono_keys.usage import parse_since, read_records, record_files, summarize


def test_a_key_is_its_id_and_secret_and_only_a_hash_is_stored(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "keys")
    issued = store.add("laptop-anna")
    assert issued.key.startswith("omk_") and len(issued.key) == 72
    user, _, secret = base64.b64decode(issued.key[4:]).decode().partition(":")
    (record,) = store.read().keys
    assert record.id == user and issued.key[4:16] == lookup_prefix(user)
    assert bcrypt.checkpw(secret.encode(), record.hash.encode())
    for path in (tmp_path / "keys").iterdir():
        if path.name == ".lock":
            continue
        assert secret not in path.read_text() and issued.key[4:] not in path.read_text()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "keys").stat().st_mode) == 0o700


def test_snippets_follow_every_change_and_count_generations(tmp_path: Path) -> None:
    store = KeyStore(tmp_path)
    a = store.add("a", rate_per_min=60)
    b = store.add("b", expires_at=datetime(2030, 1, 1, tzinfo=UTC))
    assert (a.generation, b.generation) == (1, 2)
    text = (tmp_path / snippets.MAP_FILE).read_text()
    ids = {k.name: k.id for k in store.read().keys}
    assert f'{lookup_prefix(ids["a"])} a "" 60\n' in text
    assert f'{lookup_prefix(ids["b"])} b 1893456000 ""\n' in text
    rotated = store.rotate("a")
    assert rotated.generation == 3 and rotated.key != a.key and rotated.rate_per_min == 60
    assert store.revoke("b") == 4
    accounts = (tmp_path / snippets.ACCOUNTS_FILE).read_text()
    assert ids["b"] not in accounts and ids["a"] not in accounts  # rotation gave a new id
    assert (
        (tmp_path / snippets.GENERATION_FILE)
        .read_text()
        .endswith('respond `{"generation":4}` 200\n')
    )
    assert [k.name for k in store.infos()] == ["a"]


@pytest.mark.parametrize("name", ["", "A", "a b", "a_b", "ä", "x" * 41, "operator", "a\n"])
def test_bad_names_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(NameInvalid):
        KeyStore(tmp_path).add(name)


def test_taken_and_unknown_names_are_mistakes(tmp_path: Path) -> None:
    store = KeyStore(tmp_path)
    store.add("x" * 40)
    with pytest.raises(NameTaken):
        store.add("x" * 40)
    for action in (store.revoke, store.rotate):
        with pytest.raises(NameUnknown):
            action("nobody")


def test_a_broken_store_is_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "keys.json").write_text("{not json")
    with pytest.raises(StoreUnreadable):
        KeyStore(tmp_path).add("a")
    assert (tmp_path / "keys.json").read_text() == "{not json"


@pytest.mark.parametrize(("text", "per_min"), [("60/min", 60), ("1", 1), (" 5 / min ", 5)])
def test_rates(text: str, per_min: int) -> None:
    assert parse_rate(text) == per_min


@pytest.mark.parametrize("text", ["0/min", "-1/min", "60/s", "fast", ""])
def test_bad_rates(text: str) -> None:
    with pytest.raises(ValueInvalid):
        parse_rate(text)


def test_the_bucket_spends_the_limit_then_earns_it_back() -> None:
    now = [0.0]
    limiter = RateLimiter(clock=lambda: now[0])
    assert [limiter.take("a", 3) for _ in range(3)] == [0, 0, 0]
    assert limiter.take("a", 3) == 20  # one request every 20 s
    assert limiter.take("b", 3) == 0  # another key is not affected
    now[0] = 19.0
    assert limiter.take("a", 3) == 1
    now[0] = 20.0
    assert limiter.take("a", 3) == 0


def _record(**kw: object) -> str:
    base: dict[str, object] = {"ts": 1000.0, "status": 200, "size": 10, "key": "a", "route": "/v1"}
    return json.dumps({**base, **kw}) + "\n"


def test_usage_reads_current_and_rolled_records_and_counts_what_it_cannot(tmp_path: Path) -> None:
    (tmp_path / "access-2026-01-01T00-00-00.000.log.gz").write_bytes(
        gzip.compress(_record(ts=10.0, size=5).encode())
    )
    (tmp_path / "access.log").write_text(
        _record(upstream_ms=2.5)
        + _record(status=502, key=None)
        + "garbage\n"
        + _record(ts=2000.0, route="/props")
    )
    files = record_files(tmp_path)
    assert [p.name for p in files][-1] == "access.log" and len(files) == 2
    report = summarize(read_records(files))
    assert report.unreadable == 1 and report.records == 4
    rows = {(r.key, r.route): r for r in report.rows}
    a = rows["a", "/v1"]
    assert (a.requests, a.bytes_out, a.upstream_ms) == (2, 15, 2.5)
    assert a.last_used == 1000.0
    assert rows["", "/v1"].statuses == {"502": 1}
    later = summarize(read_records(files), since=1500.0)
    assert [(r.key, r.route) for r in later.rows] == [("a", "/props")]


def test_since_takes_spans_and_dates() -> None:
    assert parse_since("30m", 10_000.0) == 10_000.0 - 1800
    assert parse_since("7d", 1e6) == 1e6 - 7 * 86400
    assert parse_since("1970-01-02", 0) == 86400.0
    with pytest.raises(ValueInvalid):
        parse_since("yesterday", 0)


def test_an_access_record_never_needs_more_than_caddy_writes() -> None:
    line = (
        '{"level":"info","ts":1.5,"request":{"method":"GET"},"duration":0.1,"size":3,'
        '"status":401,"key":null,"route":"/x","service":null,"upstream_ms":null}'
    )
    record = AccessRecord.model_validate_json(line)
    assert (record.key, record.service, record.upstream_ms) == ("", "", None)


def test_expiry_is_in_days(tmp_path: Path) -> None:
    from openmono_keys import admin

    issued = admin.add(tmp_path, "a", 1.5, "10/min")
    assert issued.expires_at is not None
    left = issued.expires_at - datetime.now(UTC)
    assert timedelta(hours=35) < left <= timedelta(hours=36)
    with pytest.raises(ValueInvalid):
        admin.add(tmp_path, "b", 0, None)
