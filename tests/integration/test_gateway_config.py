"""The gateway's environment interface: /services booleans, the startup key guard, upstream
addresses and defaults, listen/bind, and JSON errors at once when an upstream is down (real Caddy).
"""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from openmono.stack.gatewayfiles import generate
from openmono_contracts import ServicesInfo
from openmono_contracts.routed import ROUTED_SERVICES

from tests.support.gateway import (
    CADDYFILE,
    EXTRA_SERVICE,
    caddy_binary,
    closed_upstream,
    gateway,
    gateway_env,
    run_caddy,
)
from tests.support.procs import free_port
from tests.support.rawhttp import read_request
from tests.support.recording_upstream import recording_upstream

pytestmark = pytest.mark.integration

KEY = "cfg-test-key-5f0e"
BEARER = {"Authorization": f"Bearer {KEY}"}

# (env value or None for unset, what /services must say)
SERVICE_VALUES: list[tuple[str | None, bool]] = [
    ("true", True),
    ("TRUE", True),
    ("True", True),
    ("1", True),
    ("yes", True),
    ("on", True),
    ("ON", True),
    (" true ", True),
    ("false", False),
    ("0", False),
    ("no", False),
    ("off", False),
    ("", False),
    (None, False),
    ("garbage", False),
    ("truee", False),
    ("2", False),
    ('"}', False),
    ('true"}', False),
    ('", "llm": false, "x": "', False),
    ("{", False),
    ("}{", False),
    ("   ", False),
    ("tr ue", False),
    ("true\\", False),
    ("{env.HOME}", False),
    ("{http.request.uri}", False),
]


def _pairs() -> list[tuple[tuple[str | None, bool], tuple[str | None, bool]]]:
    """Each value once as search and once as scrape, paired so that few processes are needed."""
    n = len(SERVICE_VALUES)
    return [(SERVICE_VALUES[i], SERVICE_VALUES[(i + n // 2) % n]) for i in range(n)]


@pytest.mark.parametrize(
    ("search", "scrape"), _pairs(), ids=[f"{a[0]!r}/{b[0]!r}" for a, b in _pairs()]
)
def test_services_is_valid_json_with_literal_booleans(
    tmp_path: Path, search: tuple[str | None, bool], scrape: tuple[str | None, bool]
) -> None:
    # every upstream answers its health path, so the switch alone decides
    with (
        recording_upstream("up") as up,
        gateway(
            tmp_path,
            api_key=KEY,
            llama_upstream=up.address,
            searxng_upstream=up.address,
            scrape_upstream=up.address,
            search_enabled=search[0],
            scrape_enabled=scrape[0],
        ) as gw,
    ):
        for headers in ({}, BEARER):  # the agent may send its bearer anyway
            resp = httpx.get(f"{gw.url}/services", headers=headers, timeout=10)
            assert resp.status_code == 200
            assert resp.headers["content-type"] == "application/json"
            body = json.loads(resp.text)  # must parse, whatever the env held
            # every upstream answers 2xx, so crawl jobs "are durable" wherever scrape is on
            assert body == {
                "llm": True,
                # no router: the gateway sees no replicas one by one
                "llm_replicas": None,
                "search": search[1],
                "scrape": scrape[1],
                "crawl_durable": scrape[1],
            }
            assert all(type(v) is bool for k, v in body.items() if k != "llm_replicas")
            # the keys the contract declares, in its order (issue 37: crawl_durable was not)
            assert list(body) == list(ServicesInfo.model_fields)
        # a switched-off service is not even asked; probes carry no key
        paths = sorted({r.path for r in up.requests()})
        expected = {"/health"} | ({"/healthz"} if search[1] else set())
        expected |= {"/health/crawl-durable"} if scrape[1] else set()
        assert set(paths) == expected
        assert all(not r.header_values("Authorization") for r in up.requests())


def test_a_service_added_to_the_table_is_routed_probed_and_switched(tmp_path: Path) -> None:
    """One more entry of openmono_contracts.routed, generated into the Caddyfile: the real
    gateway offers it in /services, routes its paths behind the bearer without passing the key
    on, and answers 503 once it is switched off (docs/architecture.md §3, "Adding a service")."""
    caddyfile = tmp_path / "Caddyfile"
    caddyfile.write_text(
        generate("caddy/Caddyfile", CADDYFILE.read_text(), (*ROUTED_SERVICES, EXTRA_SERVICE))
    )
    with recording_upstream("extra") as up:
        for switch in ("true", "false"):
            env = {"EXTRA_UPSTREAM": up.address, "WEB_EXTRA_ENABLED": switch}
            with gateway(
                tmp_path, api_key=KEY, llama_upstream=closed_upstream(), caddyfile=caddyfile,
                extra_env=env,
            ) as gw:  # fmt: skip
                body = httpx.get(f"{gw.url}/services", timeout=10).json()
                assert list(body) == [*ServicesInfo.model_fields, "extra"]
                assert body["extra"] is (switch == "true")
                assert httpx.get(f"{gw.url}/extra/x", timeout=10).status_code == 401
                resp = httpx.get(f"{gw.url}/extra/x", headers=BEARER, timeout=10)
                if switch == "true":
                    assert resp.status_code == 200 and resp.json()["upstream"] == "extra"
                else:
                    assert resp.status_code == 503
                    assert resp.json() == {"error": "service_disabled", "service": "extra"}
        seen = [r for r in up.requests() if r.path == "/extra/x"]
        assert len(seen) == 1 and not seen[0].header_values("Authorization")


def test_services_reports_what_answers_now(tmp_path: Path) -> None:
    """Refused and silent (accepts, never answers) upstreams are false, fast; a live one true."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)  # the kernel completes handshakes; nobody ever reads or answers
    silent_addr = f"127.0.0.1:{silent.getsockname()[1]}"
    try:
        with (
            recording_upstream("search") as search,
            gateway(
                tmp_path,
                api_key=KEY,
                llama_upstream=closed_upstream(),
                searxng_upstream=search.address,
                scrape_upstream=silent_addr,
            ) as gw,
        ):
            started = time.monotonic()
            body = httpx.get(f"{gw.url}/services", timeout=10).json()
            elapsed = time.monotonic() - started
            assert body == {
                "llm": False,
                "llm_replicas": None,
                "search": True,
                "scrape": False,
                "crawl_durable": False,
            }
            assert elapsed < 1.0, elapsed
            # the same on the HTTPS listener (one route definition for both)
            tls = httpx.get(f"{gw.tls_url}/services", timeout=10, verify=_ca(gw.ca_pem))
            assert tls.json() == body
    finally:
        silent.close()


def _ca(pem: str) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cadata=pem)
    ctx.check_hostname = False  # the IP has no SNI; the private CA is the identity here
    return ctx


@contextmanager
def _loading_llama() -> Iterator[str]:
    """Answers 503 to everything, as llama-server's /health does while the model loads."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_services_llm_false_while_llama_answers_503(tmp_path: Path) -> None:
    with (
        _loading_llama() as llama,
        gateway(tmp_path, api_key=KEY, llama_upstream=llama) as gw,
    ):
        assert httpx.get(f"{gw.url}/services", timeout=10).json()["llm"] is False


def test_health_is_public_json(tmp_path: Path) -> None:
    with gateway(tmp_path, api_key=KEY, llama_upstream=closed_upstream()) as gw:
        resp = httpx.get(f"{gw.url}/health", timeout=10)
        assert resp.status_code == 200
        assert resp.headers["content-type"] == "application/json"
        assert resp.json() == {"status": "ok"}


@pytest.mark.parametrize(
    "api_key", [None, "", "   ", "\t"], ids=["unset", "empty", "spaces", "tab"]
)
def test_refuses_to_start_without_a_key(tmp_path: Path, api_key: str | None) -> None:
    env = gateway_env(
        tmp_path, api_key=api_key, listen=f":{free_port()}", llama_upstream=closed_upstream()
    )
    started = time.monotonic()
    result = run_caddy(env)
    assert result.returncode != 0, result.stdout
    # Caddy 2.11 `run` prints nothing for a Caddyfile that fails to adapt; the guard fails later,
    # at provisioning, precisely so that this message reaches the log.
    expected = (
        "LLAMA_API_KEY_must_not_contain_whitespace" if api_key else "LLAMA_API_KEY_must_be_set"
    )
    assert f"compiling matcher regexp {expected}" in result.stdout or (
        "compiling matcher regexp" in result.stdout and expected in result.stdout
    ), result.stdout
    assert time.monotonic() - started < 20


@pytest.mark.parametrize("api_key", ["key with spaces", "two  spaces", "a\\Eb", "line\nbreak"])
def test_keys_the_guard_cannot_hold_are_refused(tmp_path: Path, api_key: str) -> None:
    """The guard pastes the key into the Caddyfile text: what it cannot hold must fail closed."""
    env = gateway_env(
        tmp_path, api_key=api_key, listen=f":{free_port()}", llama_upstream=closed_upstream()
    )
    result = run_caddy(env)
    assert result.returncode != 0, result.stdout


@pytest.mark.parametrize(
    "api_key", ['"', '"}', "}", "{", "`", "#secret", "a{b}c", "{env.HOME}", "k(e)y[1]*+?", "ключ"]
)
def test_unusual_but_sane_keys_are_compared_exactly(tmp_path: Path, api_key: str) -> None:
    with (
        recording_upstream("llm") as llm,
        gateway(tmp_path, api_key=api_key, llama_upstream=llm.address) as gw,
    ):
        good = {"Authorization": f"Bearer {api_key}".encode()}
        assert httpx.get(f"{gw.url}/v1/models", headers=good, timeout=10).status_code == 200
        for bad in (f"Bearer {api_key}x", f"Bearer x{api_key}", "Bearer .*"):
            headers = {"Authorization": bad.encode()}
            assert httpx.get(f"{gw.url}/v1/models", headers=headers, timeout=10).status_code == 401
        assert len(llm.requests()) == 1


@pytest.mark.parametrize(
    ("path", "service"),
    [("/v1/models", "llm"), ("/props", "llm"), ("/search?q=x", "search"), ("/scrape", "scrape")],
)
def test_upstream_down_is_json_at_once(tmp_path: Path, path: str, service: str) -> None:
    with gateway(tmp_path, api_key=KEY, llama_upstream=closed_upstream()) as gw:
        method = "POST" if path == "/scrape" else "GET"
        started = time.monotonic()
        resp = httpx.request(method, f"{gw.url}{path}", headers=BEARER, json={}, timeout=10)
        elapsed = time.monotonic() - started
        assert resp.status_code in (502, 503)
        assert resp.headers["content-type"] == "application/json"
        assert resp.headers["retry-after"] == "2"
        assert resp.json() == {
            "error": "upstream_unavailable",
            "service": service,
            "status": resp.status_code,
        }
        assert elapsed < 1.0
        # Without the key the answer is still 401: auth is checked before any upstream.
        assert httpx.request(method, f"{gw.url}{path}", json={}, timeout=10).status_code == 401


@pytest.mark.parametrize(("path", "service"), [("/search?q=x", "search"), ("/scrape", "scrape")])
def test_a_switched_off_service_is_a_json_503_after_auth(
    tmp_path: Path, path: str, service: str
) -> None:
    with (
        recording_upstream(service) as upstream,
        gateway(
            tmp_path,
            api_key=KEY,
            llama_upstream=closed_upstream(),
            searxng_upstream=upstream.address,
            scrape_upstream=upstream.address,
            search_enabled="false",
            scrape_enabled="no",
        ) as gw,
    ):
        method = "POST" if path == "/scrape" else "GET"
        resp = httpx.request(method, f"{gw.url}{path}", headers=BEARER, json={}, timeout=10)
        assert resp.status_code == 503
        assert resp.json() == {"error": "service_disabled", "service": service}
        assert httpx.request(method, f"{gw.url}{path}", json={}, timeout=10).status_code == 401
        assert upstream.requests() == []
        assert httpx.get(f"{gw.url}/services", timeout=10).json()[service] is False


def test_empty_upstream_is_a_json_503(tmp_path: Path) -> None:
    with gateway(tmp_path, api_key=KEY, llama_upstream="") as gw:
        resp = httpx.get(f"{gw.url}/v1/models", headers=BEARER, timeout=10)
        assert resp.status_code == 503
        assert resp.json()["error"] == "upstream_unavailable"
        assert resp.headers["retry-after"] == "2"


@pytest.mark.parametrize("scheme", ["", "http://"])
def test_upstream_accepts_host_port_and_http_url(tmp_path: Path, scheme: str) -> None:
    with (
        recording_upstream("llm") as llm,
        recording_upstream("search") as search,
        recording_upstream("scrape") as scrape,
        gateway(
            tmp_path,
            api_key=KEY,
            llama_upstream=scheme + llm.address,
            searxng_upstream=scheme + search.address,
            scrape_upstream=scheme + scrape.address,
        ) as gw,
    ):
        for path, name in (("/v1/models", "llm"), ("/search?q=a", "search"), ("/scrape", "scrape")):
            resp = httpx.get(f"{gw.url}{path}", headers=BEARER, timeout=10)
            assert resp.status_code == 200
            assert resp.json() == {"upstream": name, "path": path}


def _adapt(env: dict[str, str]) -> dict[str, Any]:
    out = subprocess.run(
        [str(caddy_binary()), "adapt", "--config", str(CADDYFILE), "--adapter", "caddyfile"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return dict(json.loads(out.stdout))


def _dials(node: object) -> list[str]:
    if isinstance(node, dict):
        found = [u["dial"] for u in node.get("upstreams", []) if isinstance(u, dict)]
        return found + [d for v in node.values() for d in _dials(v)]
    if isinstance(node, list):
        return [d for v in node for d in _dials(v)]
    return []


def test_defaults_are_the_compose_service_names(tmp_path: Path) -> None:
    env = gateway_env(tmp_path, api_key=KEY, listen="", llama_upstream="")
    for name in ("GATEWAY_LISTEN", "GATEWAY_BIND", "LLAMA_UPSTREAM"):
        env.pop(name)
    env.pop("SEARXNG_UPSTREAM")
    env.pop("SCRAPE_UPSTREAM")
    env.pop("GATEWAY_TLS_LISTEN")
    env.pop("KEYS_UPSTREAM")
    config = _adapt(env)
    servers = config["apps"]["http"]["servers"]
    assert sorted(s["listen"][0] for s in servers.values()) == [":8080", ":8443"]
    server = _server(config, ":8080")
    # keys:8090: the key service, asked only for a box key with a rate limit
    assert sorted(set(_dials(server))) == [
        "keys:8090",
        "llama-server:8080",
        # the router's (used only while LLAMA_ROUTER is set: compose sets it)
        "llm-router:8092",
        "llm-router:8093",
        # its replica status (/services llm_replicas; asked only while LLAMA_ROUTER_STATUS is set)
        "llm-router:8094",
        "scrapling:5000",
        "searxng:8080",
    ]
    assert config["admin"]["disabled"] is True


def _server(config: dict[str, Any], listen: str) -> dict[str, Any]:
    found = [s for s in config["apps"]["http"]["servers"].values() if s["listen"] == [listen]]
    assert len(found) == 1, config["apps"]["http"]["servers"]
    server: dict[str, Any] = found[0]
    return server


def test_bind_and_listen(tmp_path: Path) -> None:
    env = gateway_env(
        tmp_path,
        api_key=KEY,
        listen=":47480",
        tls_listen=":47443",
        llama_upstream="127.0.0.1:7474",
    )
    config = _adapt(env)
    assert len(config["apps"]["http"]["servers"]) == 2
    for listen in ("127.0.0.1:47480", "127.0.0.1:47443"):
        server = _server(config, listen)
        # No host in the site address, so no host matcher: a relay's Host header is served too.
        assert not any("host" in m for r in server["routes"] for m in r.get("match", []))
    assert _server(config, "127.0.0.1:47443")["tls_connection_policies"]
    assert "tls_connection_policies" not in _server(config, "127.0.0.1:47480")


def test_caddyfile_is_formatted() -> None:
    out = subprocess.run(
        [str(caddy_binary()), "fmt", str(CADDYFILE)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert out.stdout == CADDYFILE.read_text()


def _proxies(node: object) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        found = [node] if node.get("handler") == "reverse_proxy" else []
        return found + [t for v in node.values() for t in _proxies(v)]
    if isinstance(node, list):
        return [t for v in node for t in _proxies(v)]
    return []


def test_upstream_connections_are_pooled_with_a_short_idle_timeout(tmp_path: Path) -> None:
    """Routes pool their upstream connections, idle for less than any upstream keeps them (5 s for
    llama.cpp's server and uvicorn), and retry a request whose pooled connection died unanswered;
    the probes keep one fresh connection each, so /services sees the upstream as it is now."""
    env = gateway_env(tmp_path, api_key=KEY, listen=":8080", llama_upstream="127.0.0.1:7474")
    config = _adapt(env)
    proxies = _proxies(config)
    # (6 routes, /firecrawl, a box key's /props and the router's generation included, + 5 probes
    # (the router's replica status for llm_replicas one of them) + 2 rate checks + the key
    # service's Firecrawl team usage + the router's /router/metrics and /router/workers)
    # x 2 listeners
    assert len(proxies) == 32
    keys = [p for p in proxies if _dials(p) == [env["KEYS_UPSTREAM"]]]
    routes = [p for p in proxies if "health_checks" in p]
    router_state = [
        p
        for p in proxies
        if "health_checks" not in p and set(_dials(p)) <= {"llm-router:8092", "llm-router:8093"}
    ]
    probes = [p for p in proxies if "health_checks" not in p and p not in keys + router_state]
    assert (len(routes), len(probes), len(keys), len(router_state)) == (12, 10, 6, 4)
    for proxy in routes:
        transport = proxy["transport"]
        assert transport["keep_alive"]["idle_timeout"] < 5 * 10**9
        assert transport["keep_alive"].get("enabled", True) is not False
        assert transport["dial_timeout"] <= 5 * 10**9
        balancing = proxy["load_balancing"]
        assert balancing["retries"] >= 1
        # a transport error is retried on every route; the llm route also retries a loading
        # replica's 503 (test_gateway_upstreams.py)
        assert balancing["retry_match"][0]["expression"] == (
            "{http.reverse_proxy.is_transport_error} == true"
        )
        assert proxy["request_buffers"] > 0  # a retried body can be sent again
    for proxy in probes:
        assert proxy["transport"]["keep_alive"] == {"enabled": False}


class _KeepsConnections:
    """An upstream that honours keep-alive (HTTP/1.1, Content-Length): counts its connections."""

    def __init__(self) -> None:
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not self.headers.get("X-Openmono-Health-Check"):
                    upstream.ports.add(self.client_address[1])
                payload = b'{"ok": true}'
                self.send_response(200)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_POST = do_GET

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.ports: set[int] = set()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.address = f"127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_requests_share_pooled_connections(tmp_path: Path) -> None:
    upstream = _KeepsConnections()
    try:
        with (
            gateway(tmp_path, api_key=KEY, llama_upstream=upstream.address) as gw,
            httpx.Client(timeout=10, headers=BEARER) as client,
        ):
            for i in range(10):
                assert client.post(f"{gw.url}/v1/chat/completions", json={"i": i}).is_success
            # sequential requests: one pooled connection carries them all
            assert len(upstream.ports) == 1, upstream.ports
    finally:
        upstream.close()


class _DropsReusedConnections:
    """An upstream that answers the first request on a connection and, like llama-server did in
    bench/gateway.py, closes the connection without a word when a second request arrives on it.
    `connections` counts the connections whose first request was proxied (not a health check),
    `drops` the requests it dropped on a reused connection."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self.connections = 0
        self.drops = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            head = read_request(conn)
            if head is None:
                return
            if b"x-openmono-health-check" not in head.lower():
                self.connections += 1
            payload = b'{"ok": true}'
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                + str(len(payload)).encode()
                + b"\r\n\r\n"
                + payload
            )
            if read_request(conn) is not None:  # a second request on it: dropped
                self.drops += 1

    def close(self) -> None:
        self.sock.close()


def test_an_upstream_dropping_reused_connections_causes_no_502(tmp_path: Path) -> None:
    upstream = _DropsReusedConnections()
    try:
        with (
            gateway(tmp_path, api_key=KEY, llama_upstream=upstream.address) as gw,
            httpx.Client(timeout=10, headers=BEARER) as client,
        ):
            for i in range(4):
                resp = client.post(f"{gw.url}/v1/chat/completions", json={"i": i})
                assert resp.status_code == 200, resp.text
                assert resp.json() == {"ok": True}
            assert upstream.connections == 4
            # pooled: Caddy reused connections and each dropped request went out again, whole
            assert upstream.drops >= 1
    finally:
        upstream.close()
