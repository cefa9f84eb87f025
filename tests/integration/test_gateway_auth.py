"""The gateway's bearer check, attacked with many Authorization variants on every protected route.

Rule enforced (caddy/README.md): the whole header must be exactly `Bearer <LLAMA_API_KEY>` --
scheme written `Bearer` (case-sensitive, as llama-server itself checks it), one space, the key, and
one Authorization header only.
Behind the gateway sit recording upstreams, so "none gets through" is checked where it matters: the
upstream never saw the request. Requests go out over raw sockets, so headers arrive byte for byte
(httpx would refuse or normalise several of them).
"""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.support.gateway import Gateway, gateway
from tests.support.recording_upstream import RecordingUpstream, recording_upstream

pytestmark = pytest.mark.integration

KEY = "gw-Test-key_0123456789abcdefXYZ"


@dataclass(frozen=True)
class RawResponse:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        values = [v for k, v in self.headers if k.lower() == name.lower()]
        return values[0] if values else None


def raw_request(
    base_url: str,
    method: str,
    target: str,
    header_lines: list[bytes],
    body: bytes = b"",
    timeout_s: float = 10.0,
) -> RawResponse:
    """One HTTP/1.1 request, header lines sent exactly as given; reads until the server closes."""
    parts = urlsplit(base_url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    head = [f"{method} {target} HTTP/1.1".encode(), f"Host: {host}:{port}".encode()]
    head += header_lines
    head += [b"Connection: close", f"Content-Length: {len(body)}".encode()]
    if body:
        head.append(b"Content-Type: application/json")
    data = b"\r\n".join(head) + b"\r\n\r\n" + body
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    raw = b"".join(chunks)
    head_bytes, _, rest = raw.partition(b"\r\n\r\n")
    lines = head_bytes.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = [(k.strip(), v.strip()) for k, v in (ln.split(":", 1) for ln in lines[1:])]
    return RawResponse(status, headers, rest)


def auth(value: str) -> list[bytes]:
    return [b"Authorization: " + value.encode()]


def _basic(userpass: str) -> str:
    return "Basic " + base64.b64encode(userpass.encode()).decode()


# (id, header lines, query appended to the path) -- every one must be refused with 401.
REFUSED: list[tuple[str, list[bytes], str]] = [
    ("missing", [], ""),
    ("empty", [b"Authorization:"], ""),
    ("blank", [b"Authorization:    "], ""),
    ("wrong-key", auth("Bearer not-the-key"), ""),
    ("scheme-only", auth("Bearer"), ""),
    ("scheme-space-only", auth("Bearer "), ""),
    ("key-without-scheme", auth(KEY), ""),
    ("lowercase-scheme", auth(f"bearer {KEY}"), ""),
    ("uppercase-scheme", auth(f"BEARER {KEY}"), ""),
    ("mixed-case-scheme", auth(f"BeArEr {KEY}"), ""),
    ("two-spaces", auth(f"Bearer  {KEY}"), ""),
    ("tab-separator", [b"Authorization: Bearer\t" + KEY.encode()], ""),
    ("no-separator", auth(f"Bearer{KEY}"), ""),
    ("colon-separator", auth(f"Bearer:{KEY}"), ""),
    ("equals-separator", auth(f"Bearer={KEY}"), ""),
    ("trailing-garbage", auth(f"Bearer {KEY}x"), ""),
    ("trailing-word", auth(f"Bearer {KEY} extra"), ""),
    ("key-prefix", auth(f"Bearer {KEY[:-1]}"), ""),
    ("key-suffix", auth(f"Bearer {KEY}{KEY}"), ""),
    ("key-case-changed", auth(f"Bearer {KEY.upper()}"), ""),
    ("quoted-key", auth(f'Bearer "{KEY}"'), ""),
    ("basic-user-key", auth(_basic(f"user:{KEY}")), ""),
    ("basic-empty-user", auth(_basic(f":{KEY}")), ""),
    ("basic-raw-key", auth(f"Basic {KEY}"), ""),
    ("token-scheme", auth(f"Token {KEY}"), ""),
    ("comma-list", auth(f"Bearer {KEY}, Bearer {KEY}"), ""),
    ("two-headers-right-first", auth(f"Bearer {KEY}") + auth("Bearer wrong"), ""),
    ("two-headers-right-last", auth("Bearer wrong") + auth(f"Bearer {KEY}"), ""),
    ("two-headers-both-right", auth(f"Bearer {KEY}") + auth(f"Bearer {KEY}"), ""),
    ("query-api_key", [], f"api_key={KEY}"),
    ("query-key", [], f"key={KEY}"),
    ("query-access_token", [], f"access_token={KEY}"),
    ("cookie", [f"Cookie: Authorization=Bearer {KEY}; api_key={KEY}".encode()], ""),
    ("x-api-key-header", [f"X-Api-Key: {KEY}".encode()], ""),  # llama-server itself accepts this
    ("proxy-authorization", [f"Proxy-Authorization: Bearer {KEY}".encode()], ""),
    ("misspelled-header", [f"Authorisation: Bearer {KEY}".encode()], ""),
    ("cyrillic-scheme", auth(f"Веаrer {KEY}"), ""),  # В, е, а are Cyrillic
    ("fullwidth-key-char", auth(f"Bearer {KEY[:-1]}Ｚ"), ""),
    ("nbsp-separator", auth(f"Bearer\u00a0{KEY}"), ""),
    ("ideographic-space", auth(f"Bearer\u3000{KEY}"), ""),
    ("placeholder-injection", auth("Bearer {env.LLAMA_API_KEY}"), ""),
    ("placeholder-header-echo", auth("{http.request.header.X-Echo}"), ""),
]

# Same header by HTTP's own rules (field names are case-insensitive; optional whitespace around a
# field value is not part of it, RFC 9110 5.5), so these are the right key and must pass.
ACCEPTED: list[tuple[str, list[bytes]]] = [
    ("exact", auth(f"Bearer {KEY}")),
    ("lowercase-field-name", [f"authorization: Bearer {KEY}".encode()]),
    ("uppercase-field-name", [f"AUTHORIZATION: Bearer {KEY}".encode()]),
    ("surrounding-ows", [f"Authorization:   Bearer {KEY} \t".encode()]),
]

# (method, path, upstream that must receive it when authorised)
ROUTES: list[tuple[str, str, str]] = [
    ("GET", "/v1/models", "llm"),
    ("POST", "/v1/chat/completions", "llm"),
    ("GET", "/v1/health", "llm"),
    ("GET", "/props", "llm"),
    ("GET", "/metrics", "llm"),
    ("GET", "/slots", "llm"),
    ("GET", "/", "llm"),
    ("GET", "/health/", "llm"),
    ("GET", "/health/../v1/models", "llm"),
    ("GET", "/services/x", "llm"),
    ("GET", "/search", "search"),
    ("GET", "/search?q=x&format=json", "search"),
    ("GET", "/searchfoo", "search"),
    ("GET", "/SEARCH?q=x", "search"),
    ("POST", "/scrape", "scrape"),
    ("POST", "/scrape/extra", "scrape"),
]


@dataclass
class Stack:
    gw: Gateway
    upstreams: dict[str, RecordingUpstream]

    def clear(self) -> None:
        for up in self.upstreams.values():
            up.clear()

    def seen(self) -> dict[str, list[str]]:
        return {name: [s.path for s in up.requests()] for name, up in self.upstreams.items()}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp: Path = tmp_path_factory.mktemp("gateway-auth")
    with (
        recording_upstream("llm") as llm,
        recording_upstream("search") as search,
        recording_upstream("scrape") as scrape,
        gateway(
            tmp,
            api_key=KEY,
            llama_upstream=llm.address,
            searxng_upstream=search.address,
            scrape_upstream=f"http://{scrape.address}",
        ) as gw,
    ):
        yield Stack(gw, {"llm": llm, "search": search, "scrape": scrape})


def _target(path: str, query: str) -> str:
    if not query:
        return path
    return f"{path}{'&' if '?' in path else '?'}{query}"


def _body(method: str) -> bytes:
    return b'{"url": "https://example.org", "messages": []}' if method == "POST" else b""


def test_matrix_is_large_enough() -> None:
    assert len(REFUSED) >= 20
    assert len({name for name, _, _ in REFUSED}) == len(REFUSED)


@pytest.mark.parametrize(("name", "lines", "query"), REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_on_every_protected_route(
    stack: Stack, name: str, lines: list[bytes], query: str
) -> None:
    stack.clear()
    extra = [b"X-Echo: Bearer " + KEY.encode()]
    for method, path, _ in ROUTES:
        resp = raw_request(stack.gw.url, method, _target(path, query), lines + extra, _body(method))
        where = f"{name}: {method} {path}"
        assert resp.status == 401, where
        assert json.loads(resp.body) == {"error": "unauthorized"}, where
        assert resp.header("Content-Type") == "application/json", where
        assert resp.header("WWW-Authenticate") == "Bearer", where
    assert stack.seen() == {"llm": [], "search": [], "scrape": []}


@pytest.mark.parametrize(("name", "lines"), ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_right_key_reaches_the_right_upstream(stack: Stack, name: str, lines: list[bytes]) -> None:
    for method, path, upstream in ROUTES:
        stack.clear()
        resp = raw_request(stack.gw.url, method, path, lines, _body(method))
        where = f"{name}: {method} {path}"
        assert resp.status == 200, where
        assert json.loads(resp.body)["upstream"] == upstream, where
        seen = stack.seen()
        # Paths are not rewritten: the upstream gets exactly the request target we sent.
        assert seen[upstream] == [path], where
        assert sum(len(v) for v in seen.values()) == 1, where


def test_authorization_reaches_llama_only(stack: Stack) -> None:
    """llama-server checks the key again itself; SearXNG and the scrape service never see it."""
    stack.clear()
    for method, path, _ in ROUTES:
        raw_request(stack.gw.url, method, path, auth(f"Bearer {KEY}"), _body(method))
    for name, up in stack.upstreams.items():
        for seen in up.requests():
            expected = [f"Bearer {KEY}"] if name == "llm" else []
            assert seen.header_values("Authorization") == expected, (name, seen.path)


def test_post_body_is_forwarded_unchanged(stack: Stack) -> None:
    stack.clear()
    body = json.dumps({"url": "https://example.org/a?b=c", "format": "markdown"}).encode()
    resp = raw_request(stack.gw.url, "POST", "/scrape", auth(f"Bearer {KEY}"), body)
    assert resp.status == 200
    [seen] = stack.upstreams["scrape"].requests()
    assert (seen.method, seen.path, seen.body) == ("POST", "/scrape", body)


@pytest.mark.parametrize("path", ["/health", "/services"])
@pytest.mark.parametrize("lines", [[], auth("Bearer wrong"), auth(f"Bearer {KEY}")])
def test_public_paths_need_no_key_and_never_proxy(
    stack: Stack, path: str, lines: list[bytes]
) -> None:
    stack.clear()
    resp = raw_request(stack.gw.url, "GET", path, lines)
    assert resp.status == 200
    assert resp.header("Content-Type") == "application/json"
    json.loads(resp.body)
    # /services asks each upstream's health path (without any key), never anything else
    health = {"/health", "/healthz", "/health/crawl-durable"}
    for up in stack.upstreams.values():
        assert all(r.path in health and not r.header_values("Authorization") for r in up.requests())
    if path == "/health":
        assert stack.seen() == {"llm": [], "search": [], "scrape": []}


def test_any_host_header_is_served(stack: Stack) -> None:
    """Behind a relay the Host header is the relay's name: the gateway must not care about it."""
    stack.clear()
    lines = [b"Host: relay.example.net", *auth(f"Bearer {KEY}")]
    # raw_request already sends a Host line; a second one is a 400 in Go, so build this one by hand.
    url = urlsplit(stack.gw.url)
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        sock.sendall(
            b"GET /v1/models HTTP/1.1\r\n" + b"\r\n".join(lines) + b"\r\nConnection: close\r\n\r\n"
        )
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 200"), data[:200]
    assert stack.seen()["llm"] == ["/v1/models"]
