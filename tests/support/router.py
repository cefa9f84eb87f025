"""The LLM route's router (`python -m openmono.stack.router`: SGLang's router and its sync loop) on
free loopback ports, over the given replicas."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.support.procs import Proc, free_port, running, wait_until


@dataclass
class Router:
    url: str
    address: str  # host:port, as the gateway's LLAMA_ROUTER
    metrics_address: str
    api_key: str
    proc: Proc

    def workers(self) -> dict[str, bool]:
        """url -> healthy, as the router sees its replicas now."""
        resp = httpx.get(
            f"{self.url}/workers", headers={"Authorization": f"Bearer {self.api_key}"}, timeout=5
        )
        resp.raise_for_status()
        return {w["url"]: bool(w["is_healthy"]) for w in resp.json()["workers"]}


@contextmanager
def llm_router(
    tmp: Path,
    api_key: str,
    workers: list[str],
    discover: str = "",
    port: int | None = None,
    metrics_port: int | None = None,
    **settings: str,
) -> Iterator[Router]:
    """Start the router and wait until it holds every one of `workers` healthy. `port` and
    `metrics_port`: given ones (a router started again where the gateway expects it), else free
    ones."""
    port, metrics_port = port or free_port(), metrics_port or free_port()
    env = {
        "LLM_ROUTER_PORT": str(port),
        "LLM_ROUTER_METRICS_PORT": str(metrics_port),
        "LLM_ROUTER_API_KEY": api_key,
        "LLM_ROUTER_WORKERS": ",".join(workers),
        "LLM_ROUTER_DISCOVER": discover,
        "LLM_ROUTER_REFRESH_S": "0.5",
        "LLM_ROUTER_HEALTH_INTERVAL_S": "1",
        **{f"LLM_ROUTER_{k.upper()}": v for k, v in settings.items()},
    }
    cmd = [sys.executable, "-m", "openmono.stack.router"]
    address = f"127.0.0.1:{port}"
    with running(cmd, tmp / f"router-{port}.log", env) as proc:
        router = Router(f"http://{address}", address, f"127.0.0.1:{metrics_port}", api_key, proc)
        want = {w if "://" in w else f"http://{w}" for w in workers}

        def ready() -> bool:
            held = router.workers()
            return want <= {u for u, ok in held.items() if ok}

        wait_until(ready, 60, "the router's replicas", proc)
        yield router
