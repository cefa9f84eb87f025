"""The stack crawl jobs run on, on loopback: Redis, the scrape service with the broker set (jobs
in the scrape workers), scrape workers consuming the crawl queue (`python -m
openmono_scrape.worker`, reading pages themselves), and the real gateway.

`crawl_stack(tmp, key, workers=2)` starts it all and yields a `CrawlStack`; `restart_scrape()`
stops the scrape service and starts it again on the same port (jobs must survive it),
`add_worker()` starts one more scrape worker. Without `durable` there is no Redis and no worker: the
scrape service runs its jobs itself. `box_keys` names agent-box keys to issue (the gateway then
runs with the real key service, `tests/support/keys.py`); `CrawlStack.keys` maps each name to its
key, and "operator" to the gateway key. The test site is `tests/support/crawl_site.py`; the guard
allow-lists 127.0.0.1 only, so a link to 127.0.0.3 (a `Canary`) must be refused.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from openmono_scrape.crawljobs import crawl_celery

from tests.support.gateway import Gateway, closed_upstream, gateway
from tests.support.keys import keyed_gateway
from tests.support.procs import Proc, free_port, start, stop_all, wait_http_ok, wait_until
from tests.support.redis import RedisServer, start_redis

ALLOW = "127.0.0.1/32"


@dataclass
class ScrapeWorker:
    node: str
    proc: Proc


def _pings(redis_url: str, node: str) -> bool:
    app = crawl_celery("crawl-stack-ping", redis_url)
    try:
        return bool(app.control.ping(destination=[node], timeout=1.0))
    finally:
        app.close()


def launch_scrape_worker(tmp: Path, env: Mapping[str, str], slices: int = 2) -> ScrapeWorker:
    """Start a scrape worker on the broker of `env` (the scrape service's); `await_scrape_worker`
    waits for it, so several start at once (their imports overlap)."""
    node = f"openmono-scrape-test-{uuid.uuid4().hex[:8]}@127.0.0.1"
    cmd = [sys.executable, "-m", "openmono_scrape.worker", "--hostname", node]
    # a lone test worker has no neighbours to sync with: skip the 1 s mingle round
    cmd += ["--without-mingle", "--without-gossip"]
    full_env = {**env, "SCRAPE_CRAWL_WORKER_SLICES": str(slices), "PYTHONUNBUFFERED": "1"}
    proc = start(cmd, tmp / f"scrape-worker-{node.split('@')[0]}.log", full_env)
    return ScrapeWorker(node, proc)


def await_scrape_worker(worker: ScrapeWorker, env: Mapping[str, str]) -> None:
    """Wait until the worker's node answers a ping on the broker of `env`."""
    broker = env["SCRAPE_CRAWL_BROKER_URL"]
    node = worker.node
    wait_until(lambda: _pings(broker, node), 60, f"scrape worker {node}", worker.proc)


def start_scrape_worker(tmp: Path, env: Mapping[str, str], slices: int = 2) -> ScrapeWorker:
    """A scrape worker on the broker of `env` (the scrape service's), once its node answers."""
    worker = launch_scrape_worker(tmp, env, slices)
    try:
        await_scrape_worker(worker, env)
    except BaseException:
        worker.proc.stop()
        raise
    return worker


@dataclass
class CrawlStack:
    tmp: Path
    gateway: Gateway
    scrape_port: int
    scrape_env: dict[str, str]
    scrape_proc: Proc
    redis: RedisServer | None = None
    workers: list[ScrapeWorker] = field(default_factory=list)
    worker_env: dict[str, str] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)

    def auth(self, name: str = "operator") -> dict[str, str]:
        """The Authorization header of the key called `name`."""
        return {"Authorization": f"Bearer {self.keys[name]}"}

    @property
    def scrape(self) -> str:
        return f"http://127.0.0.1:{self.scrape_port}"

    @property
    def firecrawl(self) -> str:
        return f"{self.gateway.url}/firecrawl"

    def restart_scrape(self) -> None:
        self.scrape_proc.stop()
        self.scrape_proc = start_scrape(self.tmp, self.scrape_port, self.scrape_env)

    def add_worker(self, concurrency: int = 1) -> ScrapeWorker:
        """One more scrape worker, running `concurrency` slices at once."""
        assert self.redis is not None
        worker = start_scrape_worker(self.tmp, self.worker_env, concurrency)
        self.workers.append(worker)
        return worker


def launch_scrape(tmp: Path, port: int, env: dict[str, str]) -> Proc:
    """Start the scrape service on `port`; `await_scrape` waits until it answers."""
    cmd = [sys.executable, "-m", "openmono_scrape", "--host", "127.0.0.1", "--port", str(port)]
    return start(cmd, tmp / f"scrape-{port}.log", env)


def await_scrape(proc: Proc, port: int) -> None:
    wait_http_ok(f"http://127.0.0.1:{port}/health", 60, proc)


def start_scrape(tmp: Path, port: int, env: dict[str, str]) -> Proc:
    proc = launch_scrape(tmp, port, env)
    try:
        await_scrape(proc, port)
    except BaseException:
        proc.stop()
        raise
    return proc


@contextmanager
def crawl_stack(
    tmp: Path,
    key: str,
    *,
    durable: bool = True,
    workers: int = 2,
    worker_concurrency: int = 1,
    slice_s: float = 3.0,
    scrape_env: dict[str, str] | None = None,
    box_keys: Sequence[str] = (),
) -> Iterator[CrawlStack]:
    with ExitStack() as stack:
        port = free_port()
        env = {
            "SCRAPE_ALLOW_CIDRS": ALLOW,
            "SCRAPE_SYSTEM_DNS": "false",
            "SCRAPE_BROWSER_PATH": "",
            "SCRAPE_CRAWL_LEASE_S": "4",
            **(scrape_env or {}),
        }
        redis = None
        if durable:
            redis = start_redis(tmp)
            stack.callback(redis.proc.stop)
            env["SCRAPE_CRAWL_BROKER_URL"] = redis.url
            env["SCRAPE_CACHE_REDIS_URL"] = redis.url.replace("/0", "/1")
        # The service and its workers start at once (their imports overlap); the gateway starts
        # once the service answers, and the stack is handed out once every worker does.
        proc = launch_scrape(tmp, port, env)
        built = CrawlStack(tmp, None, port, env, proc, redis)  # type: ignore[arg-type]
        stack.callback(lambda: built.scrape_proc.stop())
        # the scrape workers read pages as the service does: its settings, and a slice length
        built.worker_env = {**env, "SCRAPE_CRAWL_SLICE_S": str(slice_s)}
        stack.callback(lambda: stop_all([w.proc for w in built.workers]))
        for _ in range(workers if durable else 0):
            built.workers.append(launch_scrape_worker(tmp, built.worker_env, worker_concurrency))
        await_scrape(proc, port)
        built.keys["operator"] = key
        if box_keys:
            keyed = stack.enter_context(
                keyed_gateway(
                    tmp,
                    api_key=key,
                    llama_upstream=closed_upstream(),
                    tokens=False,
                    scrape_upstream=f"127.0.0.1:{port}",
                )
            )
            built.gateway = keyed.gw
            for name in box_keys:
                built.keys[name] = keyed.backend.add(name, None, None).key
        else:
            built.gateway = stack.enter_context(
                gateway(
                    tmp,
                    api_key=key,
                    llama_upstream=closed_upstream(),
                    scrape_upstream=f"127.0.0.1:{port}",
                )
            )
        for worker in built.workers:
            await_scrape_worker(worker, built.worker_env)
        yield built
