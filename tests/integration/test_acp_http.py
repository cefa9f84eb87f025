"""`openmono serve`: ACP over HTTP/SSE as a real process, against the scripted LLM server."""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.clean_env import is_ours
from tests.support.procs import free_port, running
from tests.support.scripted_llm import Call, ScriptedLLM, Turn

pytestmark = pytest.mark.integration

KEY = "llm-key"
TOKEN = "serve-token-123"
API = "/api/v1"


def sse_events(body: str) -> list[tuple[str, dict[str, Any]]]:
    """`event:` / `data:` frames as (event, data) pairs."""
    out = []
    for frame in body.split("\n\n"):
        event, data = None, None
        for line in frame.splitlines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
        if event is not None and data is not None:
            out.append((event, data))
    return out


class Server:
    def __init__(self, base: str, ws: Path, llm: ScriptedLLM, data: Path) -> None:
        self.base, self.ws, self.llm, self.data = base, ws, llm, data
        self.auth = {"Authorization": f"Bearer {TOKEN}"}

    def call(self, method: str, path: str, **kw: Any) -> httpx.Response:
        headers = {**self.auth, **kw.pop("headers", {})}
        return httpx.request(method, self.base + path, headers=headers, timeout=60, **kw)

    def turn(self, sid: str, prompt: str) -> list[tuple[str, dict[str, Any]]]:
        with httpx.stream(
            "POST", f"{self.base}{API}/sessions/{sid}/turn", headers=self.auth,
            json={"prompt": prompt}, timeout=60,
        ) as response:  # fmt: skip
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            return sse_events(response.read().decode())


@pytest.fixture
def server(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path
) -> Iterator[Callable[[list[Turn]], Server]]:
    started: list[Any] = []

    def make(turns: list[Turn]) -> Server:
        llm = scripted_llm(turns, api_key=KEY, n_ctx=32768)
        ws = tmp_path / "ws"
        ws.mkdir(exist_ok=True)
        port = free_port()
        env = {k: "" for k in os.environ if is_ours(k)}
        env.update(
            {
                "OPENMONO_DATA_DIR": str(tmp_path / "data"),
                "OPENMONO_LLM_ENDPOINT": llm.url,
                "OPENMONO_LLM_API_KEY": KEY,
                "OPENMONO_LLM_CONTEXT_WINDOW": "32768",
                "HOME": str(tmp_path / "home"),
            }
        )
        cmd = [sys.executable, "-m", "openmono.cli", "-C", str(ws), "serve",
               "--acp-port", str(port), "--token", TOKEN]  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        ctx = running(cmd, tmp_path / "serve.log", env, ready_url=f"{base}{API}/discovery")
        ctx.__enter__()
        started.append(ctx)
        return Server(base, ws, llm, tmp_path / "data")

    yield make
    for ctx in started:
        ctx.__exit__(None, None, None)


def test_session_turn_messages_delete(server: Callable[[list[Turn]], Server]) -> None:
    srv = server(
        [
            Turn(reasoning="look first", text="Reading. ",
                 tool_calls=[Call("ListDirectory", {"path": "."}, id="l1")]),
            Turn(text="The folder is empty."),
        ]
    )  # fmt: skip
    discovery = httpx.get(srv.base + f"{API}/discovery", timeout=10).json()
    assert discovery["protocol_version"] == 1 and discovery["auth"] == "bearer"
    created = srv.call("POST", f"{API}/sessions", json={"cwd": str(srv.ws)})
    assert created.status_code == 201, created.text
    sid = created.json()["session_id"]
    assert created.json()["mode"] == "agent" and created.json()["live"] is True
    listed = srv.call("GET", f"{API}/sessions").json()["sessions"]
    assert [s["session_id"] for s in listed if s["live"]] == [sid]

    events = srv.turn(sid, "what is in this folder?")
    kinds = [e for e, _ in events]
    assert kinds[0] == "session" and kinds[-1] == "done"
    assert events[-1][1]["reason"] == "stop"
    assert events[-1][1]["text"] == "The folder is empty."
    assert "reasoning" in kinds and "usage" in kinds
    assert "".join(d["text"] for e, d in events if e == "text") == ("Reading. The folder is empty.")
    started = [d for e, d in events if e == "tool_started"]
    finished = [d for e, d in events if e == "tool_finished"]
    assert [d["call_id"] for d in started] == ["l1"] and finished[0]["ok"] is True

    one = srv.call("GET", f"{API}/sessions/{sid}").json()
    assert one["busy"] is False and one["messages"] == 4
    messages = srv.call("GET", f"{API}/sessions/{sid}/messages").json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[0]["content"] == "what is in this folder?"
    assert messages[2]["tool_call_id"] == "l1"

    assert srv.call("DELETE", f"{API}/sessions/{sid}").status_code == 204
    assert srv.call("GET", f"{API}/sessions/{sid}").status_code == 404
    assert srv.call("GET", f"{API}/sessions/{sid}/messages").status_code == 404
    assert not (srv.data / "sessions" / f"{sid}.jsonl").exists()
    assert srv.call("POST", f"{API}/sessions/{sid}/turn", json={"prompt": "x"}).status_code == 404


def test_auth_is_enforced(server: Callable[[list[Turn]], Server]) -> None:
    srv = server([])
    for method, path in [
        ("GET", f"{API}/sessions"),
        ("POST", f"{API}/sessions"),
        ("GET", f"{API}/sessions/x"),
        ("DELETE", f"{API}/sessions/x"),
        ("GET", f"{API}/sessions/x/messages"),
        ("POST", f"{API}/sessions/x/turn"),
    ]:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
            r = httpx.request(method, srv.base + path, headers=headers, timeout=10)
            assert r.status_code == 401, (method, path, headers)
            assert r.json()["error"] == "unauthorized"
            assert r.headers["www-authenticate"] == "Bearer"
    assert srv.call("GET", f"{API}/sessions").status_code == 200
    assert srv.llm.chat_requests == []


def test_permissions_non_interactive_unless_allowed(
    server: Callable[[list[Turn]], Server],
) -> None:
    write = {"file_path": "a.txt", "content": "A\n"}
    srv = server(
        [
            Turn(tool_calls=[Call("FileWrite", write, id="w1")]),
            Turn(text="Denied, as expected."),
            Turn(tool_calls=[Call("FileWrite", write, id="w2")]),
            Turn(text="Written."),
        ]
    )
    denied = srv.call("POST", f"{API}/sessions", json={"cwd": str(srv.ws)}).json()["session_id"]
    events = srv.turn(denied, "write a.txt")
    finished = [d for e, d in events if e == "tool_finished"]
    assert finished[0]["denied"] is True and "non-interactive" in finished[0]["error"]
    assert not (srv.ws / "a.txt").exists()
    body = {"cwd": str(srv.ws), "allow": ["FileWrite"]}
    allowed = srv.call("POST", f"{API}/sessions", json=body).json()["session_id"]
    events = srv.turn(allowed, "write a.txt")
    assert events[-1][1]["reason"] == "stop"
    assert (srv.ws / "a.txt").read_text() == "A\n"


def test_bad_requests(server: Callable[[list[Turn]], Server]) -> None:
    srv = server([])
    r = srv.call("POST", f"{API}/sessions", json={"cwd": "/no/such/dir"})
    assert r.status_code == 400 and "not a directory" in r.json()["message"]
    r = srv.call("POST", f"{API}/sessions", json={"mode": "wild"})
    assert r.status_code == 422
    sid = srv.call("POST", f"{API}/sessions", json={}).json()["session_id"]
    assert srv.call("POST", f"{API}/sessions/{sid}/turn", json={}).status_code == 422


def test_cancel_a_running_turn_and_busy(server: Callable[[list[Turn]], Server]) -> None:
    srv = server(
        [Turn(text="y" * 3000, chunk_chars=3, chunk_delay_s=0.02), Turn(text="after cancel")]
    )
    sid = srv.call("POST", f"{API}/sessions", json={}).json()["session_id"]
    frames: list[tuple[str, dict[str, Any]]] = []
    with httpx.stream(
        "POST", f"{srv.base}{API}/sessions/{sid}/turn", headers=srv.auth,
        json={"prompt": "long"}, timeout=60,
    ) as response:  # fmt: skip
        buffer = ""
        cancelled = False
        for chunk in response.iter_text():
            buffer += chunk
            *complete, buffer = buffer.split("\n\n")
            frames += sse_events("\n\n".join(complete) + "\n\n")
            if not cancelled and any(e == "text" for e, _ in frames):
                busy = srv.call("POST", f"{API}/sessions/{sid}/turn", json={"prompt": "x"})
                assert busy.status_code == 409
                assert srv.call("GET", f"{API}/sessions/{sid}").json()["busy"] is True
                assert srv.call("POST", f"{API}/sessions/{sid}/cancel").json() == {
                    "cancelled": True
                }
                cancelled = True
    assert frames[-1][0] == "done" and frames[-1][1]["reason"] == "cancelled"
    said = "".join(d["text"] for e, d in frames if e == "text")
    assert 0 < len(said) < 3000
    events = srv.turn(sid, "again")
    assert events[-1][1]["text"] == "after cancel"


def test_a_client_that_disconnects_cancels_the_turn(
    server: Callable[[list[Turn]], Server],
) -> None:
    import time

    srv = server([Turn(text="z" * 3000, chunk_chars=3, chunk_delay_s=0.02), Turn(text="next")])
    sid = srv.call("POST", f"{API}/sessions", json={}).json()["session_id"]
    with httpx.stream(
        "POST", f"{srv.base}{API}/sessions/{sid}/turn", headers=srv.auth,
        json={"prompt": "long"}, timeout=60,
    ) as response:  # fmt: skip
        for chunk in response.iter_text():
            if "event: text" in chunk:
                break  # leave mid-turn: the connection closes
    deadline = time.monotonic() + 20
    while srv.call("GET", f"{API}/sessions/{sid}").json()["busy"]:
        assert time.monotonic() < deadline, "the turn kept running after the client left"
        time.sleep(0.05)
    assert srv.turn(sid, "again")[-1][1]["text"] == "next"
    messages = srv.call("GET", f"{API}/sessions/{sid}/messages").json()["messages"]
    interrupted = [m for m in messages if m["role"] == "assistant" and m["interrupted"]]
    assert len(interrupted) == 1 and 0 < len(interrupted[0]["content"]) < 3000


def test_serve_with_tls_pins_one_persisted_certificate(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path
) -> None:
    """`acp.tls=on` (what binding beyond loopback does by itself): HTTPS with a self-signed
    certificate made once under the data dir, logged with its pin, reused on the next start."""
    import ssl

    llm = scripted_llm([], api_key=KEY)
    (tmp_path / "ws").mkdir()
    env = {k: "" for k in os.environ if is_ours(k)}
    env.update(
        OPENMONO_DATA_DIR=str(tmp_path / "data"),
        OPENMONO_LLM_ENDPOINT=llm.url,
        OPENMONO_LLM_API_KEY=KEY,
        OPENMONO_ACP_TLS="on",
        HOME=str(tmp_path / "home"),
    )
    cert = tmp_path / "data" / "acp-tls" / "cert.pem"
    pins = []
    for attempt in range(2):
        port = free_port()
        cmd = [sys.executable, "-m", "openmono.cli", "-C", str(tmp_path / "ws"), "serve",
               "--acp-port", str(port), "--token", TOKEN]  # fmt: skip
        base = f"https://127.0.0.1:{port}"
        log = tmp_path / f"serve-{attempt}.log"
        # the readiness probe is plain http: it must fail, so wait on the log instead
        with running(cmd, log, env):
            verify = ssl.create_default_context(cafile=str(cert)) if _wait_file(cert) else None
            assert verify is not None  # host name checked too: the certificate names 127.0.0.1
            resp = _retry_get(f"{base}{API}/sessions", verify)
            assert resp.status_code == 200
            assert httpx.get(f"{base}{API}/sessions", verify=verify, timeout=5).status_code == 401
            with pytest.raises(httpx.HTTPError):  # no plain http on that port
                httpx.get(f"http://127.0.0.1:{port}{API}/discovery", timeout=5)
            assert stat.S_IMODE((cert.parent / "key.pem").stat().st_mode) == 0o600
        text = log.read_text()
        assert f"https://127.0.0.1:{port}" in text and str(cert) in text
        pins.append(text.split("SHA-256 ", 1)[1].split(")", 1)[0])
    assert pins[0] == pins[1]  # the same certificate: clients pin it once


def _wait_file(path: Path, timeout_s: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.is_file() and path.stat().st_size > 0:
            return True
        time.sleep(0.05)
    return False


def _retry_get(url: str, verify: Any, timeout_s: float = 30.0) -> httpx.Response:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return httpx.get(url, headers={"Authorization": f"Bearer {TOKEN}"}, verify=verify)
        except httpx.ConnectError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
