"""Keys per agent box at the real gateway: added, revoked, rotated and expired without a restart.

The gateway (caddy/Caddyfile as shipped), the key service (`python -m openmono_keys serve`) and a
local SSE upstream run as real processes; keys change through the same backend `openmono keys`
uses natively (store, SIGUSR1 to the gateway, wait for the generation it answers).
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from openmono_keys import usage

from tests.support.keys import KeyedGateway, keyed_gateway
from tests.support.procs import wait_until
from tests.support.sse_upstream import sse_upstream

pytestmark = pytest.mark.integration

OPERATOR_KEY = "operator-key-for-tests"
CHAT = "/v1/chat/completions"
BODY = {"messages": [{"role": "user", "content": "hi"}], "stream": True}
REFUSED = {"error": "unauthorized"}


@pytest.fixture
def kg(tmp_path: Path) -> Iterator[KeyedGateway]:
    # 40 events 150 ms apart: a stream of 6 s, longer than the gateway's 5 s grace period
    with (
        sse_upstream(tmp_path / "sse.log", events=40, interval_ms=150) as upstream,
        keyed_gateway(tmp_path, api_key=OPERATOR_KEY, llama_upstream=upstream) as kg,
    ):
        yield kg


def _tls_context(kg: KeyedGateway) -> ssl.SSLContext:
    wait_until(lambda: "BEGIN" in kg.gw.ca_pem, 15, "the gateway's CA")
    ctx = ssl.create_default_context(cadata=kg.gw.ca_pem)
    ctx.check_hostname = False  # as the agent: the CA is the identity
    return ctx


def _get(
    client: httpx.Client, base: str, key: str | None, path: str = "/v1/models"
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key is not None else {}
    return client.get(f"{base}{path}", headers=headers)


def _clients(kg: KeyedGateway) -> list[tuple[httpx.Client, str]]:
    plain = httpx.Client(timeout=10)
    tls = httpx.Client(timeout=10, verify=_tls_context(kg))
    return [(plain, kg.gw.url), (tls, kg.gw.tls_url)]


def _assert_refused(resp: httpx.Response, firecrawl: bool = False) -> None:
    assert resp.status_code == 401, resp.text
    assert resp.headers["www-authenticate"] == "Bearer"
    assert resp.headers["content-type"] == "application/json"
    expected = {"success": False, "error": "unauthorized"} if firecrawl else REFUSED
    assert resp.json() == expected


def test_box_keys_and_the_operator_key_work_on_both_listeners(kg: KeyedGateway) -> None:
    anna = kg.backend.add("laptop-anna", None, None).key
    ben = kg.backend.add("laptop-ben", None, None).key
    assert anna.startswith("omk_") and anna != ben
    for client, base in _clients(kg):
        with client:
            for key in (anna, ben, OPERATOR_KEY):
                resp = client.post(
                    f"{base}{CHAT}", json=BODY, headers={"Authorization": f"Bearer {key}"}
                )
                assert resp.status_code == 200, resp.text
                assert resp.text.rstrip().endswith("data: [DONE]")
            _assert_refused(_get(client, base, None))
    # the store holds hashes: no key, no secret
    stored = kg.store.path.read_text()
    assert anna not in stored and anna[4:] not in stored
    assert all(k.hash.startswith("$2b$04$") for k in kg.store.read().keys)


def _stream(base: str, key: str, verify: ssl.SSLContext | bool, out: dict[str, object]) -> None:
    with (
        httpx.Client(timeout=30, verify=verify) as client,
        client.stream(
            "POST", f"{base}{CHAT}", json=BODY, headers={"Authorization": f"Bearer {key}"}
        ) as resp,
    ):
        out["status"] = resp.status_code
        events = 0
        for line in resp.iter_lines():
            if line.startswith('data: {"id"') and '"choices": []' not in line:
                events += 1  # a token; the last event (choices [], the counts) is not one
                out["started"] = True
            elif line == "data: [DONE]":
                out["done"] = True
        out["events"] = events


def test_a_revoked_key_is_refused_within_a_second_and_other_streams_go_on(
    kg: KeyedGateway,
) -> None:
    """Revocation reloads the gateway's config (SIGUSR1), no process restarts: streams of other
    keys in flight on both listeners, longer than the 5 s grace period, finish whole."""
    anna = kg.backend.add("laptop-anna", None, None).key
    ben = kg.backend.add("laptop-ben", None, None).key
    pid = kg.gw.proc.pid
    ctx = _tls_context(kg)
    streams: list[dict[str, object]] = [{}, {}]
    threads = [
        threading.Thread(target=_stream, args=(kg.gw.url, anna, False, streams[0])),
        threading.Thread(target=_stream, args=(kg.gw.tls_url, anna, ctx, streams[1])),
    ]
    for t in threads:
        t.start()
    wait_until(lambda: all(s.get("started") for s in streams), 10, "both streams started")

    clients = _clients(kg)
    for client, base in clients:  # warm connections: the clock measures the gateway, not dials
        assert _get(client, base, ben).status_code == 200
    started = time.monotonic()
    kg.backend.revoke("laptop-ben")
    refused_after = {}
    for client, base in clients:
        while _get(client, base, ben).status_code != 401:
            assert time.monotonic() - started < 5, "the revoked key still works"
        refused_after[base] = time.monotonic() - started
    elapsed = max(refused_after.values())
    print(f"revocation: refused on both listeners {elapsed * 1000:.0f} ms after `revoke`")
    assert elapsed < 1.0, refused_after
    for client, base in clients:
        _assert_refused(_get(client, base, ben))
        assert _get(client, base, anna).status_code == 200
        client.close()

    for t in threads:
        t.join(30)
    assert streams == [{"status": 200, "started": True, "done": True, "events": 40}] * 2
    assert kg.gw.proc.pid == pid and kg.gw.proc.alive()  # reloaded, not restarted


def test_bad_keys_all_get_the_same_401_and_none_is_logged(kg: KeyedGateway) -> None:
    anna = kg.backend.add("laptop-anna", None, None).key
    gone = kg.backend.add("laptop-gone", None, None).key
    kg.backend.revoke("laptop-gone")
    rotated_away = kg.backend.add("laptop-rot", None, None).key
    kg.backend.rotate("laptop-rot")
    past = datetime.now(UTC) - timedelta(minutes=1)
    expired = kg.store.add("laptop-old", expires_at=past).key
    kg.backend.apply(kg.store.read().generation)
    wrong_secret = anna[:20] + ("A" if anna[20] != "A" else "B") + anna[21:]
    unknown = "omk_" + "Q" * 68
    bad = {
        "unknown": unknown,
        "malformed": "not a key at all",
        "revoked": gone,
        "rotated away": rotated_away,
        "expired": expired,
        "wrong secret": wrong_secret,
        "truncated": anna[:-1],
    }
    for client, base in _clients(kg):
        with client:
            for name, key in bad.items():
                for path in ("/v1/models", "/search?q=x", "/scrape"):
                    resp = _get(client, base, key, path)
                    assert resp.status_code == 401, (name, path)
                    _assert_refused(resp)
                _assert_refused(_get(client, base, key, "/firecrawl/v1/scrape"), firecrawl=True)
            # the same key twice, or a good and a bad one: never accepted
            for pair in ([anna, anna], [anna, unknown], [OPERATOR_KEY, anna]):
                headers = [("Authorization", f"Bearer {k}") for k in pair]
                _assert_refused(client.get(f"{base}/v1/models", headers=headers))
            lower = client.get(f"{base}/v1/models", headers={"Authorization": f"bearer {anna}"})
            _assert_refused(lower)
            assert _get(client, base, anna).status_code == 200
    logs = kg.logs()
    assert logs, "no logs were written"
    for key in [*bad.values(), anna]:
        if key.startswith("omk_"):
            assert key[4:24] not in logs, "a key reached a log"
    assert "not a key at all" not in logs


def test_an_expiring_key_is_refused_once_it_expires_without_any_change(
    kg: KeyedGateway,
) -> None:
    soon = datetime.now(UTC) + timedelta(seconds=2)
    key = kg.store.add("laptop-temp", expires_at=soon).key
    kg.backend.apply(kg.store.read().generation)
    with httpx.Client(timeout=10) as client:
        assert _get(client, kg.gw.url, key).status_code == 200
        wait_until(lambda: _get(client, kg.gw.url, key).status_code == 401, 6, "the key expired")
        assert datetime.now(UTC) >= soon - timedelta(seconds=1)
        _assert_refused(_get(client, kg.gw.url, key))
    # the gateway compares whole seconds (up to 1 s early); the store the exact time
    wait_until(lambda: datetime.now(UTC) >= soon, 3, "the expiry time")
    assert [k.expired for k in kg.store.infos()] == [True]


def test_a_rate_limited_key_gets_429_and_other_keys_do_not(kg: KeyedGateway) -> None:
    slow = kg.backend.add("laptop-slow", None, "3/min").key
    free = kg.backend.add("laptop-free", None, None).key
    with httpx.Client(timeout=10) as client:
        for _ in range(3):
            assert _get(client, kg.gw.url, slow).status_code == 200
        resp = _get(client, kg.gw.url, slow)
        assert resp.status_code == 429, resp.text
        assert resp.headers["content-type"] == "application/json"
        wait = int(resp.headers["retry-after"])
        assert 1 <= wait <= 20
        assert resp.json() == {
            "error": "rate_limited",
            "key": "laptop-slow",
            "limit_per_min": 3,
            "retry_after_s": wait,
        }
        fire = _get(client, kg.gw.url, slow, "/firecrawl/v1/scrape")
        assert fire.status_code == 429
        assert fire.json()["success"] is False
        for key in (free, OPERATOR_KEY):
            for _ in range(5):
                assert _get(client, kg.gw.url, key).status_code == 200


def test_usage_per_key_and_route_from_the_access_records(kg: KeyedGateway) -> None:
    anna = kg.backend.add("laptop-anna", None, None).key
    prompt = json.dumps({**BODY, "messages": [{"role": "user", "content": "the-prompt-text"}]})
    with httpx.Client(timeout=10) as client:
        for _ in range(3):
            resp = client.post(
                f"{kg.gw.url}{CHAT}?secret=q",
                content=prompt.encode(),
                headers={"Authorization": f"Bearer {anna}", "Content-Type": "application/json"},
            )
            assert resp.status_code == 200
        assert _get(client, kg.gw.url, OPERATOR_KEY).status_code == 200
        assert _get(client, kg.gw.url, "omk_" + "Z" * 68).status_code == 401
        assert client.get(f"{kg.gw.url}/health").status_code == 200  # not recorded

    def rows() -> dict[tuple[str, str], usage.UsageRow]:
        return {(r.key, r.route): r for r in usage.usage(kg.usage_dir).rows}

    wait_until(lambda: len(rows()) == 3, 5, "the access records")
    found = rows()
    chat = found["laptop-anna", CHAT]
    assert chat.requests == 3 and chat.statuses == {"200": 3}
    assert chat.bytes_out > 3 * 40 * 50  # 40 events each
    assert chat.upstream_ms > 3 * 40 * 150 * 0.9  # the upstream streamed for ~6 s each
    assert found["operator", "/v1/models"].requests == 1
    assert found["", "/v1/models"].statuses == {"401": 1}
    # the token tap's counts, from the last event of each stream (the stand-in counts a byte of
    # the request body as a prompt token, an event as a completion token)
    wait_until(lambda: rows()["laptop-anna", CHAT].counted == 3, 5, "the token records")
    chat = rows()["laptop-anna", CHAT]
    assert (chat.prompt_tokens, chat.completion_tokens) == (3 * len(prompt), 3 * 40)
    assert found["operator", "/v1/models"].counted == 0  # a GET carries no counts
    access = "".join(p.read_text() for p in kg.usage_dir.glob("access*"))
    for line in access.splitlines():
        entry = json.loads(line)
        assert "uri" not in entry["request"] and "headers" not in entry["request"]
    tokens = (kg.usage_dir / "tokens.log").read_text()
    for line in tokens.splitlines():
        assert set(json.loads(line)) <= {
            "ts", "key", "route", "status", "prompt_tokens", "completion_tokens",
            "cached_tokens", "complete",
        }  # fmt: skip
    records = access + tokens
    assert "secret=q" not in records and anna[4:24] not in records
    assert "the-prompt-text" not in records and "tok1" not in records


def test_a_stream_the_client_drops_still_counts_for_its_key(kg: KeyedGateway) -> None:
    """Caddy aborts the handler of a stream whose client went away, so the fields it adds after
    the response (key, route) are missing: the record counts under the key the header claimed."""
    anna = kg.backend.add("laptop-anna", None, None).key
    for key in (anna, OPERATOR_KEY):
        with (
            httpx.Client(timeout=10) as client,
            client.stream(
                "POST", f"{kg.gw.url}{CHAT}", json=BODY, headers={"Authorization": f"Bearer {key}"}
            ) as resp,
        ):
            assert resp.status_code == 200
            next(resp.iter_lines())  # one event, then the client goes away

    def rows() -> dict[tuple[str, str], usage.UsageRow]:
        return {(r.key, r.route): r for r in usage.usage(kg.usage_dir).rows}

    wait_until(lambda: len(rows()) == 2, 10, "the access records of the dropped streams")
    for name in ("laptop-anna", "operator"):
        row = rows()[name, CHAT]
        assert (row.requests, row.dropped, row.statuses) == (1, 1, {"200": 1}), row
        assert row.counted == 0  # the counts come in the last event, which never came
    # the tap saw each stream end early and closed its replica connection (generation stops)
    wait_until(
        lambda: len((kg.usage_dir / "tokens.log").read_text().splitlines()) == 2,
        10,
        "the token records of the dropped streams",
    )
    for line in (kg.usage_dir / "tokens.log").read_text().splitlines():
        assert json.loads(line)["complete"] is False
    records = "".join(p.read_text() for p in kg.usage_dir.glob("*"))
    assert anna[4:24] not in records and OPERATOR_KEY not in records
