"""The LLM route's router: SGLang's router (the `sglang-router` wheel) over the llama-server
replicas, kept in step with the replicas that exist (docs/scaling.md, "The router").

`python -m openmono.stack.router` starts `sglang-router launch` as its child (same process group,
so the keeper or compose stops both) with no workers, then keeps the router's worker list equal to
the replicas it is told of, every `LLM_ROUTER_REFRESH_S`:

- `LLM_ROUTER_WORKERS`: a static `host:port` list (the native stack: `LLAMA_UPSTREAM`), each with
  its own key when `LLM_ROUTER_WORKER_KEYS` (`host:port=key,...`) names one;
- `LLM_ROUTER_DISCOVER`: `name:port`, every address `name` resolves to now (for compose: Docker's
  DNS answer for `llama-server` lists the running replicas of `--scale`).

A replica missing from the router is added (`POST /workers`, with its key); one the router holds
that is no longer wanted is removed (`DELETE /workers/{id}`). A static replica that is down stays
listed: the router's own health checks mark it unhealthy, and it is used again once it answers.
The router has no Docker DNS discovery of its own (only Kubernetes'), hence this loop.

The loop also keeps the replicas' health as the router sees it and serves it on
`LLM_ROUTER_STATUS_PORT` (`GET /replicas`), names and health only: the gateway's `/services` puts
it there as `llm_replicas` (caddy/Caddyfile, `replicas_probe`; the shape is
`openmono_contracts.services.ReplicaHealth`). A replica's name is `llama-<n>`, its place in the
wanted list, never its address: `/services` is public.

Self-contained on purpose (the standard library and pydantic-settings only), so a router image
can carry this one file next to the wheel.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Literal
from urllib.parse import quote

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

try:  # the stack's error base; a router image may carry this file alone
    from openmono.stack.errors import StackError as _Base
except ImportError:  # pragma: no cover - only there
    _Base = Exception  # type: ignore[misc,assignment]

HTTP_TIMEOUT_S = 3.0


class RouterError(_Base):
    """The router or its settings cannot work."""


class RouterSettings(BaseSettings):
    """The router's settings (env prefix `LLM_ROUTER_`)."""

    model_config = SettingsConfigDict(env_prefix="LLM_ROUTER_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(ge=1, le=65535)
    # its Prometheus exporter (it panics when its default 29000 is taken: always our own port)
    metrics_port: int = Field(ge=1, le=65535)
    metrics_host: str = "127.0.0.1"
    # what the router requires from its clients (the gateway) and sends to every replica that has
    # no key of its own in worker_keys
    api_key: SecretStr
    workers: str = ""
    worker_keys: SecretStr = SecretStr("")
    discover: str = ""
    refresh_s: float = Field(default=1.0, gt=0.0, le=60.0)
    # cache_aware: the replica whose prefix tree holds most of the prompt, unless the load is
    # imbalanced; manual: X-SMG-Routing-Key (the gateway copies X-OpenMono-Session into it)
    policy: Literal["cache_aware", "manual", "round_robin", "power_of_two"] = "cache_aware"
    # cache_aware's load balancing: when (max - min) in-flight requests > abs and max > min * rel,
    # the least-loaded replica is chosen whatever the cache says. 0 and 1.0: any imbalance. Prompts
    # share prefixes (the agent's system prompt, a chat template's first line), so with 1 the
    # prefix tree kept sending concurrent requests to one busy one-slot replica while another
    # idled (the compose scale test timed out on it)
    balance_abs_threshold: int = Field(default=0, ge=0)
    balance_rel_threshold: float = Field(default=1.0, ge=1.0)
    cache_threshold: float = Field(default=0.3, ge=0.0, le=1.0)
    # the bounded queue: the router admits max_concurrent requests at once (0: no bound; its
    # limiter is a token bucket, given back when a request ends and also refilled by
    # max_concurrent a second), queue_size more wait for at most queue_timeout_s; a request past
    # that is refused at once (the gateway makes it its JSON 503 with Retry-After)
    max_concurrent: int = Field(default=0, ge=0)
    queue_size: int = Field(default=64, ge=0)
    queue_timeout_s: int = Field(default=60, ge=1)
    health_interval_s: int = Field(default=2, ge=1)
    # the replicas' names and health for the gateway's /services (0: not served)
    status_host: str = "127.0.0.1"
    status_port: int = Field(default=0, ge=0, le=65535)
    # the interpreter that has the sglang-router wheel
    python: str = sys.executable

    def worker_urls(self) -> list[str]:
        return [_url(entry) for entry in _entries(self.workers)]

    def keys(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for entry in _entries(self.worker_keys.get_secret_value()):
            where, sep, key = entry.partition("=")
            if not sep or not key:
                raise RouterError(f"LLM_ROUTER_WORKER_KEYS: {where!r} has no `=key`")
            out[_url(where)] = key
        return out

    def discover_target(self) -> tuple[str, int] | None:
        if not self.discover:
            return None
        name, sep, port = self.discover.rpartition(":")
        if not sep or not name or not port.isdigit():
            raise RouterError(f"LLM_ROUTER_DISCOVER={self.discover!r} is not name:port")
        return name, int(port)


def _entries(text: str) -> list[str]:
    return [e for e in text.replace(",", " ").split() if e]


def _url(entry: str) -> str:
    entry = entry.rstrip("/")
    return entry if "://" in entry else f"http://{entry}"


# `sglang-router launch ARGS` with the key from the environment, not the command line (which
# every local user can read in `ps`): its argument parser, then the key set on what it returns.
CHILD = (
    "import os, sys\n"
    "from sglang_router.launch_router import launch_router, parse_router_args\n"
    "args = parse_router_args(sys.argv[1:])\n"
    "args.api_key = os.environ['LLM_ROUTER_API_KEY']\n"
    "launch_router(args)\n"
)


def launch_command(s: RouterSettings) -> list[str]:
    """The router with no workers (the sync loop adds them, each with its key); the key is read
    from LLM_ROUTER_API_KEY in the child."""
    cmd = [
        s.python,
        "-c",
        CHILD,
        "--host",
        s.host,
        "--port",
        str(s.port),
        "--prometheus-host",
        s.metrics_host,
        "--prometheus-port",
        str(s.metrics_port),
        "--policy",
        s.policy,
        "--cache-threshold",
        str(s.cache_threshold),
        "--balance-abs-threshold",
        str(s.balance_abs_threshold),
        "--balance-rel-threshold",
        str(s.balance_rel_threshold),
        "--health-check-interval-secs",
        str(s.health_interval_s),
        "--health-failure-threshold",
        "1",
        "--health-success-threshold",
        "1",
        "--health-check-timeout-secs",
        "2",
        # a replica that refuses or drops a request: the next try goes elsewhere, soon
        "--retry-initial-backoff-ms",
        "10",
        "--retry-max-backoff-ms",
        "200",
        "--cb-failure-threshold",
        "2",
        "--cb-timeout-duration-secs",
        "5",
        "--queue-size",
        str(s.queue_size),
        "--queue-timeout-secs",
        str(s.queue_timeout_s),
        "--max-concurrent-requests",
        str(s.max_concurrent or -1),
        "--log-level",
        "warn",
    ]
    if s.policy == "manual":
        # a new routing key (session) goes to the replica with the fewest requests in flight
        cmd += ["--assignment-mode", "min_load"]
    return cmd


# pidfd_getfd(2), the same number on every Linux architecture (the generic syscall table)
_SYS_PIDFD_GETFD = 438


def nodelay(pid: int, port: int) -> int:
    """Turn Nagle's algorithm off on the router's listening socket (process `pid`, `port`) and on
    the connections it accepted so far; the number of sockets changed.

    The router (axum 0.8 in sglang-router 0.3.2) accepts connections with Nagle on and writes a
    stream's response head and its first event apart: on a reused connection whose reader delays
    its ACKs (the gateway's pooled one under steady traffic) the first event waited for that ACK,
    40 ms. It has no flag for TCP_NODELAY and holds the GIL while it runs, so nothing in its own
    process can set it; its parent takes a copy of the socket (pidfd_getfd, which needs ptrace
    rights over the child: natively ours, in a container only with CAP_SYS_PTRACE) and sets it
    there. Linux copies the option from a listening socket to the sockets it accepts later."""
    inodes: set[str] = set()
    suffix = f":{port:04X}"
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[1].endswith(suffix):
                inodes.add(fields[9])
    fds = []
    for entry in Path(f"/proc/{pid}/fd").iterdir():
        try:
            link = str(entry.readlink())
        except OSError:
            continue  # closed meanwhile
        if link.startswith("socket:[") and link[8:-1] in inodes:
            fds.append(int(entry.name))
    if not fds:
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    changed = 0
    try:
        for fd in fds:
            copy = libc.syscall(_SYS_PIDFD_GETFD, pidfd, fd, 0)
            if copy < 0:
                err = ctypes.get_errno()
                if changed or err == 9:  # EBADF: that one was closed meanwhile
                    continue
                raise OSError(err, f"pidfd_getfd: {os.strerror(err)}")
            with socket.socket(fileno=copy) as sock:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            changed += 1
    finally:
        os.close(pidfd)
    return changed


class RouterClient:
    """The router's worker API, with its key."""

    def __init__(self, base: str, key: str) -> None:
        self.base = base
        self.key = key

    def _call(self, method: str, path: str, body: dict[str, object] | None = None) -> object:
        data = json.dumps(body).encode() if body is not None else None
        # our own http:// base (loopback or the compose network), never a caller's scheme
        req = urllib.request.Request(f"{self.base}{path}", data=data, method=method)  # noqa: S310
        req.add_header("Authorization", f"Bearer {self.key}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT_S) as resp:  # noqa: S310 (loopback)
            raw = resp.read()
        return json.loads(raw) if raw else None

    def listening(self) -> bool:
        """It answers its worker API (its /health is 503 while it holds no healthy worker)."""
        try:
            self.workers()
        except (OSError, ValueError):
            return False
        return True

    def workers(self) -> dict[str, str]:
        """url -> worker id, of every worker the router holds."""
        return {url: worker_id for url, (worker_id, _) in self.held().items()}

    def held(self) -> dict[str, tuple[str, bool]]:
        """url -> (worker id, healthy), of every worker the router holds."""
        answer = self._call("GET", "/workers")
        listed = answer.get("workers", []) if isinstance(answer, dict) else []
        return {
            str(w["url"]): (str(w["id"]), w.get("is_healthy") is True)
            for w in listed
            if isinstance(w, dict)
        }

    def add(self, url: str, key: str) -> None:
        self._call("POST", "/workers", {"url": url, "api_key": key})

    def remove(self, worker_id: str) -> None:
        self._call("DELETE", f"/workers/{quote(worker_id, safe='')}")


def resolve(name: str, port: int) -> list[str]:
    """Every IPv4 address `name` resolves to now, as worker URLs (none when the lookup fails)."""
    try:
        infos = socket.getaddrinfo(name, port, socket.AF_INET, socket.SOCK_STREAM)
    except OSError:
        return []
    return sorted({f"http://{info[4][0]}:{port}" for info in infos})


def wanted(s: RouterSettings) -> list[str]:
    urls = s.worker_urls()
    target = s.discover_target()
    if target is not None:
        urls += [u for u in resolve(*target) if u not in urls]
    return urls


# The router's `POST /workers` is a job (202): it lists the replica only once the replica answers
# its health path, which takes a loading replica its model's load time. Asked again every pass,
# the router queued four jobs a second per loading replica (seen in compose: 235 in a minute, each
# failing "already exists" in the end). So an add is asked once and again only after this long.
ADD_AGAIN_AFTER_S = 60.0


def sync(
    client: RouterClient,
    want: Iterable[str],
    keys: dict[str, str],
    default_key: str,
    asked: dict[str, float] | None = None,
) -> dict[str, bool]:
    """One pass: add what is wanted and missing, remove what is held and not wanted. Returns
    url -> healthy of the wanted replicas as the router saw them (one just added: not yet).

    `asked` (url -> when its add was asked, kept between passes) holds the adds the router has
    not finished yet, so each is asked once per ADD_AGAIN_AFTER_S; a replica no longer wanted
    leaves it, so one that comes back is asked for at once."""
    want = list(want)
    asked = {} if asked is None else asked
    held = client.held()
    now = time.monotonic()
    for url in list(asked):
        if url in held or url not in want:
            del asked[url]
    for url in want:
        if url not in held and now - asked.get(url, -ADD_AGAIN_AFTER_S) >= ADD_AGAIN_AFTER_S:
            client.add(url, keys.get(url, default_key))
            asked[url] = now
            print(f"router: adding {url}", flush=True)
    for url, (worker_id, _) in held.items():
        if url not in want:
            # at once: a stopped replica's address no longer answers, and a dial to it would wait
            # for the kernel's SYN retries (the compose router's sysctls bound that at 3 s)
            client.remove(worker_id)
            print(f"router: removed {url}", flush=True)
    return {url: url in held and held[url][1] for url in want}


def replicas_body(health: dict[str, bool]) -> bytes:
    """The `/replicas` answer: `[{"name": "llama-1", "healthy": true}, ...]` in the wanted order
    (openmono_contracts.services.ReplicaHealth; this file stays free of the contracts package)."""
    listed = [
        {"name": f"llama-{i}", "healthy": healthy} for i, healthy in enumerate(health.values(), 1)
    ]
    return json.dumps(listed, separators=(",", ":")).encode()


class ReplicaView:
    """The last pass's health, for the status endpoint; stale after `max_age_s` (a sync loop that
    no longer reaches the router must not report the last answer for ever)."""

    def __init__(self, max_age_s: float) -> None:
        self.max_age_s = max_age_s
        self._lock = threading.Lock()
        self._body = b""
        self._at = 0.0

    def update(self, health: dict[str, bool]) -> None:
        body = replicas_body(health)
        with self._lock:
            self._body, self._at = body, time.monotonic()

    def current(self) -> bytes | None:
        with self._lock:
            fresh = self._body and time.monotonic() - self._at <= self.max_age_s
            return self._body if fresh else None


def status_server(host: str, port: int, view: ReplicaView) -> ThreadingHTTPServer:
    """`GET /replicas` -> 200 with the view (and `X-OpenMono-Replicas: v1`, which the gateway
    requires), 503 while it is stale; anything else 404. Served from a daemon thread."""

    class Handler(BaseHTTPRequestHandler):
        # a client that connects and sends nothing does not hold its thread for ever
        timeout = 5.0

        def do_GET(self) -> None:
            body = view.current() if self.path == "/replicas" else b""
            if body:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("X-OpenMono-Replicas", "v1")
            else:
                body = b"null"
                self.send_response(503 if self.path == "/replicas" else 404)
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # a request a second from the gateway's probes: not worth a log line each

    try:
        server = ThreadingHTTPServer((host, port), Handler)
    except OSError as exc:
        raise RouterError(f"cannot serve the replicas' status on {host}:{port}: {exc}") from exc
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="replicas-status", daemon=True).start()
    return server


def serve(s: RouterSettings) -> int:
    keys = s.keys()
    s.discover_target()  # a bad value stops here, before the router starts
    client = RouterClient(f"http://{s.host}:{s.port}", s.api_key.get_secret_value())
    try:
        env = {**os.environ, "LLM_ROUTER_API_KEY": s.api_key.get_secret_value()}
        child = subprocess.Popen(launch_command(s), env=env)
    except OSError as exc:
        raise RouterError(f"cannot start the router with {s.python!r}: {exc}") from exc
    stop = threading.Event()
    view = ReplicaView(max_age_s=max(3.0, 3 * s.refresh_s))
    try:
        status = status_server(s.status_host, s.status_port, view) if s.status_port else None
    except RouterError:
        child.terminate()
        child.wait(10)
        raise

    def _on_signal(signum: int, _frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    default_key = s.api_key.get_secret_value()
    asked: dict[str, float] = {}
    try:
        while not stop.is_set() and child.poll() is None and not client.listening():
            stop.wait(0.1)
        print(f"router: listening on {s.host}:{s.port} (policy {s.policy})", flush=True)
        if child.poll() is None:
            try:
                nodelay(child.pid, s.port)
            except OSError as exc:  # slower first events, nothing worse
                print(f"router: cannot set TCP_NODELAY on its sockets: {exc}", file=sys.stderr)
        while not stop.is_set() and child.poll() is None:
            try:
                view.update(sync(client, wanted(s), keys, default_key, asked))
            except (OSError, ValueError, urllib.error.HTTPError) as exc:
                print(f"router: sync failed, trying again: {exc}", file=sys.stderr, flush=True)
            stop.wait(s.refresh_s)
    finally:
        if status is not None:
            status.shutdown()
            status.server_close()
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
    code = child.returncode
    return 0 if stop.is_set() else (code if code and code > 0 else 1)


def main() -> int:
    try:
        settings = RouterSettings()  # from the environment
        return serve(settings)
    except RouterError as exc:
        print(f"router: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # pydantic's ValidationError: one line per bad setting
        print(f"router: invalid settings: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    os.umask(0o077)
    raise SystemExit(main())
