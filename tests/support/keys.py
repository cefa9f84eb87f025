"""A gateway with box keys: the real key service (`python -m openmono_keys serve`) and the real
gateway reading a store folder of the test's own, with usage records on.

`keyed_gateway(tmp)` yields a `KeyedGateway`: the gateway, the store (`openmono_keys.KeyStore`),
the backend `openmono keys` uses natively (store change + SIGUSR1 + wait for the generation),
and the folders of the store and of the access records.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from openmono.keys import Native
from openmono_keys import KeyStore

from tests.support.gateway import GATEWAY_SECRET, Gateway, gateway
from tests.support.procs import Proc, free_port, running
from tests.support.router import Router


@dataclass
class KeyedGateway:
    gw: Gateway
    store: KeyStore
    backend: Native
    usage_dir: Path
    keys_proc: Proc
    notes: list[str]
    keys_address: str  # host:port of the key service's /v1/rate
    tap_address: str  # host:port of its token tap

    def logs(self) -> str:
        """Everything the gateway, the key service and the access records wrote."""
        records = "".join(p.read_text(errors="replace") for p in self.usage_dir.glob("*"))
        return self.gw.proc.output() + self.keys_proc.output() + records


@contextmanager
def key_service(
    tmp: Path, folder: Path, usage_dir: Path, tap_upstreams: str = "", tap_port: int = 0
) -> Iterator[tuple[str, Proc]]:
    """The key service; with `tap_port`, its token tap too (dialling only `tap_upstreams`)."""
    port = free_port()
    env = {
        "KEYS_HOST": "127.0.0.1",
        "KEYS_PORT": str(port),
        "KEYS_DIR": str(folder),
        "KEYS_USAGE_DIR": str(usage_dir),
        "KEYS_TAP_PORT": str(tap_port),
        "KEYS_TAP_UPSTREAMS": tap_upstreams,
        "GATEWAY_SECRET": GATEWAY_SECRET,
    }
    cmd = [sys.executable, "-m", "openmono_keys", "serve"]
    url = f"http://127.0.0.1:{port}"
    with running(cmd, tmp / f"keys-{port}.log", env, ready_url=f"{url}/health") as proc:
        yield f"127.0.0.1:{port}", proc


@contextmanager
def keyed_gateway(
    tmp: Path,
    *,
    api_key: str,
    llama_upstream: str,
    tokens: bool = True,
    router: Router | None = None,
    **gateway_kw: object,
) -> Iterator[KeyedGateway]:
    """`tokens`: LLM requests go through the key service's token tap, as the stack ships. The
    tap runs either way: a box key's `/props` passes it. `router`: generation goes through it
    (LLAMA_ROUTER), and the tap dials it too."""
    folder = tmp / "gateway-keys"
    usage_dir = tmp / "usage"
    tap_port = free_port()
    dialled = f"{llama_upstream} {router.address}" if router else llama_upstream
    with key_service(tmp, folder, usage_dir, dialled, tap_port) as (keys_address, keys_proc):
        env = {
            "LLAMA_ROUTER": router.address if router else "",
            "LLAMA_ROUTER_METRICS": router.metrics_address if router else "",
            "GATEWAY_KEYS_DIR": str(folder),
            "KEYS_UPSTREAM": keys_address,
            "GATEWAY_USAGE": "on",
            "GATEWAY_ACCESS_LOG": str(usage_dir / "access.log"),
            "GATEWAY_USAGE_TOKENS": "on" if tokens else "off",
            "LLAMA_ACTIVE_CHECKS": "off" if tokens else "on",
            "GATEWAY_TOKEN_TAP": f"http://127.0.0.1:{tap_port}",
        }
        with gateway(
            tmp, api_key=api_key, llama_upstream=llama_upstream, extra_env=env, **gateway_kw
        ) as gw:  # type: ignore[arg-type]
            notes: list[str] = []
            backend = Native(folder, usage_dir, lambda: (gw.proc.pid, gw.url), notes.append)
            yield KeyedGateway(
                gw,
                KeyStore(folder),
                backend,
                usage_dir,
                keys_proc,
                notes,
                keys_address,
                f"127.0.0.1:{tap_port}",
            )
