"""The HTTPS listener's certificates in internal mode are a fixed set (real Caddy, real handshakes).

The port is the one frpc tunnels to the internet, so any stranger can send any SNI. On-demand
issuance would store one certificate per name sent (a disk-filling DoS); the gateway must instead
serve its `openmono-gateway` certificate for any SNI or none, issue nothing new, and route the
request whatever Host header it carries (the relay's name is not known to the gateway).
"""

from __future__ import annotations

import secrets
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.gateway import Gateway, gateway
from tests.support.recording_upstream import RecordingUpstream, recording_upstream

pytestmark = pytest.mark.integration

KEY = "tls-bound-key-8c1d"
FIXED_NAMES = {"openmono-gateway", "localhost", "127.0.0.1"}
RANDOM_SNIS = 50


PARTS = (".crt", ".key", ".json")  # what Caddy stores for each name


def _cert_files(gw: Gateway) -> set[str]:
    """Every file in the storage of Caddy's issued certificates (one folder per name)."""
    assert gw.data_home is not None
    root = gw.data_home / "caddy" / "certificates"
    if not root.exists():
        return set()
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def _wait_for_fixed_certificates(gw: Gateway, timeout_s: float = 15.0) -> set[str]:
    """The startup issuance of the fixed names may finish just after /health answers. Caddy writes
    a name's certificate, key and metadata (.crt, .key, .json) one after another: wait for all."""
    deadline = time.monotonic() + timeout_s
    while True:
        files = _cert_files(gw)
        names = {
            name
            for name in FIXED_NAMES
            if all(
                any(f.endswith(f"/{name}{ext}") for f in files) for ext in (".crt", ".key", ".json")
            )
        }
        if names >= FIXED_NAMES or time.monotonic() > deadline:
            return files
        time.sleep(0.1)


def _context(ca_pem: str) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cadata=ca_pem)
    ctx.check_hostname = False  # as the agent (openmono_contracts.trust): the CA is the identity
    return ctx


def _request(
    gw: Gateway, sni: str | None, host: str, path: str, auth: bool
) -> tuple[set[str], bytes]:
    """One HTTPS request with this SNI (None: no SNI) and Host; (the certificate's SANs, reply)."""
    port = int(gw.tls_url.rsplit(":", 1)[1])
    headers = f"Host: {host}\r\nConnection: close\r\n"
    if auth:
        headers += f"Authorization: Bearer {KEY}\r\n"
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        _context(gw.ca_pem).wrap_socket(raw, server_hostname=sni) as tls,
    ):
        cert = tls.getpeercert()
        tls.sendall(f"GET {path} HTTP/1.1\r\n{headers}\r\n".encode())
        reply = b""
        while chunk := tls.recv(65536):
            reply += chunk
    sans = {str(v) for _, v in cert.get("subjectAltName", ())}
    return sans, reply


def test_random_snis_issue_nothing_and_get_the_fixed_certificate(tmp_path: Path) -> None:
    with (
        recording_upstream("llm") as llm,
        gateway(tmp_path, api_key=KEY, llama_upstream=llm.address) as gw,
    ):
        before = _wait_for_fixed_certificates(gw)
        for _ in range(RANDOM_SNIS):
            name = f"{secrets.token_hex(6)}.example.net"
            sans, reply = _request(gw, name, name, "/health", auth=False)
            assert reply.startswith(b"HTTP/1.1 200"), reply[:200]
            assert sans == {"openmono-gateway"}, (name, sans)
        # no SNI at all (an agent that reaches the relay by IP address)
        sans, reply = _request(gw, None, "203.0.113.7:47443", "/health", auth=False)
        assert sans & FIXED_NAMES, sans
        assert reply.startswith(b"HTTP/1.1 200"), reply[:200]
        created = _cert_files(gw) - before
        assert not created, f"{len(created)} files created, e.g. {sorted(created)[:3]}"
        # exactly the fixed names have a certificate, and each is served by its own name
        assert {Path(f).parts[1] for f in before} == FIXED_NAMES, before
        assert _request(gw, "localhost", "localhost", "/health", auth=False)[0] == {"localhost"}


@pytest.fixture(scope="module")
def routed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Gateway, RecordingUpstream]]:
    """One gateway (its fixed certificates issued) for the SNI cases: each only reads through it."""
    with (
        recording_upstream("llm") as llm,
        gateway(tmp_path_factory.mktemp("routed"), api_key=KEY, llama_upstream=llm.address) as gw,
    ):
        _wait_for_fixed_certificates(gw)
        yield gw, llm


@pytest.mark.parametrize("sni", [None, "relay.example.com", "openmono-gateway"])
def test_routes_and_bearer_answer_whatever_the_host(
    routed: tuple[Gateway, RecordingUpstream], sni: str | None
) -> None:
    gw, llm = routed
    llm.clear()
    for host in ("relay.example.com", "relay.example.com:47443", "198.51.100.4", "127.0.0.1"):
        _, refused = _request(gw, sni, host, "/v1/models", auth=False)
        assert refused.startswith(b"HTTP/1.1 401"), (host, refused[:200])
        _, served = _request(gw, sni, host, "/v1/models", auth=True)
        assert served.startswith(b"HTTP/1.1 200"), (host, served[:300])
        assert b'"upstream": "llm"' in served or b'"upstream":"llm"' in served, served
    assert [r.path for r in llm.requests()] == ["/v1/models"] * 4
