"""`openmono setup join` and `setup gateway --rotate-key` against the real native stack (Caddy and
llama.cpp's server on free ports): the join lines work as pasted, and after a rotation the old key
is locked out at once, the new one works, and the loaded model was not restarted.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.native_stack import join_exports, native_stack_env, run_openmono

pytestmark = pytest.mark.integration


@pytest.fixture
def stack_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    with native_stack_env(tmp_path) as env:
        yield env


def _verify(pem: str) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cadata=pem)
    ctx.check_hostname = False  # an IP: no SNI, the private CA is the identity (caddy/README.md)
    return ctx


def _status(url: str, key: str, ca: str) -> int:
    headers = {"Authorization": f"Bearer {key}"}
    return httpx.get(
        f"{url}/v1/models", headers=headers, verify=_verify(ca), timeout=10
    ).status_code


def _pid(env: dict[str, str], service: str) -> int:
    rows = {r["service"]: r for r in json.loads(run_openmono(["status", "--json"], env).stdout)}
    pid: int = rows[service]["pid"]
    return pid


def test_join_then_rotate_locks_the_old_key_out(stack_env: dict[str, str], tmp_path: Path) -> None:
    up = run_openmono(["up"], stack_env)
    assert up.returncode == 0, up.stdout + up.stderr
    tls_url = f"https://127.0.0.1:{stack_env['GATEWAY_TLS_PORT']}"
    assert tls_url in up.stdout
    ca_file = tmp_path / "data" / "stack" / "xdg-data" / "caddy" / "pki" / "authorities"
    ca_file = ca_file / "local" / "root.crt"
    assert ca_file.is_file()  # Caddy's storage under the stack data dir

    refused = run_openmono(["setup", "join", "--relay-url", "http://relay.example:7000"], stack_env)
    assert refused.returncode == 1
    assert "https://" in refused.stderr and "Traceback" not in refused.stderr

    joined = run_openmono(["setup", "join", "--relay-url", tls_url], stack_env)
    assert joined.returncode == 0, joined.stderr
    first = join_exports(joined.stdout)
    assert first["endpoint"] == tls_url
    assert first["ca"].strip() == ca_file.read_text().strip()
    assert _status(tls_url, first["key"], first["ca"]) == 200
    llama_pid = _pid(stack_env, "llama-server")

    rotated = run_openmono(["setup", "gateway", "--rotate-key", "--via", "native"], stack_env)
    assert rotated.returncode == 0, rotated.stdout + rotated.stderr
    assert "old key is refused" in rotated.stdout
    second = join_exports(rotated.stdout.split("\n\n", 1)[1])  # the relay URL was remembered
    assert second["key"] != first["key"] and second["ca"] == first["ca"]
    assert second["key"] not in rotated.stderr

    # the old key is refused at once, on both listeners; the new one works; the model kept running
    assert _status(tls_url, first["key"], first["ca"]) == 401
    plain = f"http://127.0.0.1:{stack_env['GATEWAY_PORT']}"
    old = httpx.get(f"{plain}/v1/models", headers={"Authorization": f"Bearer {first['key']}"})
    assert old.status_code == 401
    assert _status(tls_url, second["key"], second["ca"]) == 200
    assert _pid(stack_env, "llama-server") == llama_pid
