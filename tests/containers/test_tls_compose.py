"""The compose paths of issue 11 on a real engine: `openmono setup join` and `setup gateway
--rotate-key` run on the host against a `--profile server` stack, and a real `openmono -p` through a
recording TCP relay (standing in for frps + frpc) in front of the gateway's published TLS port.

The relay's recording holds neither the key nor the prompt; the same run over the plain port shows
both (the control: the check can fail). A CA other than the gateway's is refused with the message
that says what to do. After a rotation the old key is refused at once and the new one works, through
the published TLS port, and the CA is the same: it lives in the caddy-data volume, which outlives
the gateway's recreate. `GATEWAY_TLS_MODE=files` serves the operator's own certificate from the
folder `GATEWAY_TLS_DIR` names: the same project switched to it and brought up again, which
recreates caddy alone (one model load for the module, not two).
"""

from __future__ import annotations

import os
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from openmono.stack.envfile import set_env

from tests.containers.conftest import Project, ProjectFactory
from tests.support.native_stack import join_exports
from tests.support.procs import ROOT
from tests.support.tcp_relay import Relay, tcp_relay

pytestmark = [pytest.mark.containers, pytest.mark.slow, pytest.mark.timeout(900)]

OPENMONO = str(Path(sys.executable).parent / "openmono")
PROMPT = "Name one colour of the rainbow, relay-canary-5e0b"
CA_PATH = "/data/caddy/pki/authorities/local/root.crt"


@dataclass
class Run:
    code: int
    out: str
    err: str
    took: float


def _host_env(tmp: Path, **extra: str) -> dict[str, str]:
    """A host shell of the operator's: this checkout, the project's env file, a private HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENMONO_", "LLAMA_"))}
    env.update(HOME=str(tmp), OPENMONO_ROOT=str(ROOT), OPENMONO_DATA_DIR=str(tmp / "data"))
    # the operator's docker CLI config (the compose plugin lives there), whatever HOME is
    env.setdefault("DOCKER_CONFIG", str(Path.home() / ".docker"))
    env.update(extra)
    return env


def _run(argv: list[str], env: dict[str, str], cwd: Path = ROOT, timeout: float = 600) -> Run:
    start = time.monotonic()
    proc = subprocess.Popen(
        argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"{argv} timed out\n{out}\n{err}") from None
    return Run(proc.returncode, out, err, time.monotonic() - start)


def _status(url: str, key: str, ca: str) -> int:
    ctx = ssl.create_default_context(cadata=ca)
    ctx.check_hostname = False  # an IP: the private CA is the identity (caddy/README.md)
    headers = {"Authorization": f"Bearer {key}"}
    return httpx.get(f"{url}/v1/models", headers=headers, verify=ctx, timeout=10).status_code


def _agent(tmp: Path, endpoint: str, key: str, ca: str | None) -> Run:
    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    extra = {
        "OPENMONO_LLM_ENDPOINT": endpoint,
        "OPENMONO_LLM_API_KEY": key,
        "OPENMONO_LLM_MAX_RETRIES": "0",
        "OPENMONO_LLM_MAX_TOKENS": "24",
        "OPENMONO_BROKER_URL": "",
    }
    if ca is not None:
        extra["OPENMONO_GATEWAY_CA"] = ca
    return _run([OPENMONO, "-p", PROMPT], _host_env(tmp, **extra), cwd=ws, timeout=300)


def _leaks(relay: Relay, key: str) -> list[str]:
    seen = relay.recorded()
    return [name for name, s in (("key", key), ("prompt", PROMPT)) if s.encode() in seen]


def _other_ca(tmp: Path) -> str:
    """A CA of a man in the middle: self-signed, never the gateway's."""
    key, crt = tmp / "mitm.key", tmp / "mitm.crt"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-keyout", str(key), "-out", str(crt), "-days", "2", "-subj", "/CN=mitm CA"],
        capture_output=True, timeout=30, check=True,
    )  # fmt: skip
    return crt.read_text()


@pytest.fixture(scope="module")
def stack(project: ProjectFactory) -> Iterator[Project]:
    p = project("compose.yaml", LLAMA_CTX_SIZE="4096")
    try:
        start = time.monotonic()
        p.up("server")
        p.wait_healthy("llama-server", "caddy")
        print(f"\n--profile server healthy in {time.monotonic() - start:.1f} s")
        yield p
    finally:
        p.down()  # down -v even when a test failed
    assert p.leftovers() == {"containers": [], "networks": [], "volumes": []}


def _ca_in_container(p: Project) -> str:
    done = p.exec("caddy", "cat", CA_PATH)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_join_relay_agent_wrong_ca_and_rotate(stack: Project, tmp_path: Path) -> None:
    p = stack
    env = _host_env(tmp_path, OPENMONO_ENV_FILE=str(p.env_file))
    tls_port = int(p.env["GATEWAY_TLS_PORT"])
    # a native stack ran on this box once: its CA file outlives it and must not be handed out
    stale = tmp_path / "data" / "stack" / "xdg-data" / "caddy" / "pki" / "authorities" / "local"
    stale.mkdir(parents=True)
    (stale / "root.crt").write_text(_other_ca(tmp_path))
    with tcp_relay(tls_port) as relay:
        # join, compose mode: the CA comes from the running caddy container
        joined = _run([OPENMONO, "setup", "join", "--relay-url", relay.tls_url], env)
        assert joined.code == 0, joined.out + joined.err
        first = join_exports(joined.out)
        assert first["endpoint"] == relay.tls_url and first["key"] == p.key
        ca = _ca_in_container(p)
        assert first["ca"].strip() == ca.strip()
        print(f"\njoin (compose) took {joined.took:.2f} s")

        # the agent on the host, through the relay: the relay sees only ciphertext
        run = _agent(tmp_path, first["endpoint"], first["key"], first["ca"])
        assert run.code == 0, run.out + run.err
        assert run.out.strip(), run.err
        print(f"openmono -p through the relay (TLS, SmolLM2) took {run.took:.2f} s")
        assert relay.connections >= 1 and len(relay.recorded()) > 2000
        assert _leaks(relay, first["key"]) == []

        # a man in the middle's CA is refused before anything is sent
        sent = len(relay.recorded())
        wrong = _agent(tmp_path, first["endpoint"], first["key"], _other_ca(tmp_path))
        assert wrong.code != 0
        assert "OPENMONO_GATEWAY_CA does not vouch for" in wrong.err
        assert "openmono setup join" in wrong.err and "Traceback" not in wrong.err
        assert _leaks(relay, first["key"]) == []
        # it did reach the gateway, and stopped at the handshake
        assert len(relay.recorded()) > sent

    # the control: the same run over the plain port (a loopback relay) shows key and prompt
    with tcp_relay(int(p.env["GATEWAY_PORT"])) as plain:
        run = _agent(tmp_path, plain.url, first["key"], None)
        assert run.code == 0, run.out + run.err
        assert _leaks(plain, first["key"]) == ["key", "prompt"]

    # rotate, compose mode: the old key is refused at once, the new one works, the CA stays
    tls_url = f"https://127.0.0.1:{tls_port}"
    assert not p.env.get("LLAMA_UPSTREAM_KEY")  # what `openmono setup` writes today
    keys = [first]
    for n in (1, 2):
        before = {s: p.container(s) for s in ("caddy", "llama-server")}
        rotated = _run([OPENMONO, "setup", "gateway", "--rotate-key", "--via", "compose"], env)
        assert rotated.code == 0, rotated.out + rotated.err
        print(f"rotate #{n} (compose) took {rotated.took:.2f} s")
        old, new = keys[-1]["key"], p.key
        assert _status(tls_url, old, first["ca"]) == 401
        assert _status(tls_url, new, first["ca"]) == 200
        assert "old key is refused" in rotated.out
        lines = join_exports(rotated.out.split("\n\n", 1)[1])  # the relay URL was remembered
        assert lines["key"] == new != old and new not in rotated.err
        assert lines["endpoint"] == relay.tls_url
        after = {s: p.container(s) for s in before}
        assert after["caddy"] != before["caddy"]  # recreated ...
        assert lines["ca"] == first["ca"] and _ca_in_container(p).strip() == ca.strip()  # same CA
        # the first rotation gives llama-server its own key (one restart); later ones spare it
        restarted = after["llama-server"] != before["llama-server"]
        assert restarted == (n == 1), rotated.out
        assert ("llama-server restarts once" in rotated.out) == (n == 1)
        plain_old = httpx.get(
            f"{p.gateway}/v1/models", headers={"Authorization": f"Bearer {old}"}, timeout=10
        )
        assert plain_old.status_code == 401
        keys.append(lines)
    assert p.env.get("LLAMA_UPSTREAM_KEY")


def test_files_mode_serves_your_own_certificate(stack: Project, tmp_path: Path) -> None:
    certs = tmp_path / "certs"
    certs.mkdir()
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-keyout", str(certs / "key.pem"), "-out", str(certs / "cert.pem"),
         "-days", "2", "-subj", "/CN=gateway.test",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:gateway.test"],
        capture_output=True, timeout=30, check=True,
    )  # fmt: skip
    p = stack
    set_env(p.env_file, {"GATEWAY_TLS_MODE": "files", "GATEWAY_TLS_DIR": str(certs)})
    try:
        caddy = p.container("caddy")
        p.up("server")  # caddy's settings changed: compose recreates it, llama-server runs on
        assert p.container("caddy") != caddy
        p.wait_healthy("llama-server", "caddy")
        pem = (certs / "cert.pem").read_text()
        url = f"https://127.0.0.1:{p.env['GATEWAY_TLS_PORT']}"
        # the name is checked too: the certificate says 127.0.0.1
        ctx = ssl.create_default_context(cadata=pem)
        r = httpx.get(f"{url}/v1/models", headers=p.auth, verify=ctx, timeout=10)
        assert r.status_code == 200, r.text
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            httpx.get(f"{url}/health", verify=ssl.create_default_context(), timeout=10)
    finally:
        # back to the settings the project was created with: `down -v` removes the volumes of
        # the services as the env file describes them, and the empty caddy-tls volume the
        # internal mode mounted is one of them only while GATEWAY_TLS_DIR is unset
        set_env(p.env_file, {"GATEWAY_TLS_MODE": "internal", "GATEWAY_TLS_DIR": ""})
