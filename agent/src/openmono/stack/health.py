"""Health probes of the stack's services: HTTP status, Redis PING, or a line in a service log."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from openmono_contracts.redisauth import ping


@dataclass(frozen=True)
class Health:
    """Outcome of one probe: `ok` plus a short human detail."""

    ok: bool
    detail: str


@dataclass(frozen=True)
class HttpProbe:
    """Healthy when GET `url` answers 200."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)

    def check(self) -> Health:
        try:
            r = httpx.get(self.url, headers=self.headers, timeout=2.0)
        except httpx.HTTPError as exc:
            return Health(False, f"{type(exc).__name__} on {self.url}")
        if r.status_code == 200:
            return Health(True, f"200 {httpx.URL(self.url).path}")
        return Health(False, f"{r.status_code} {r.text[:80].strip()}")


@dataclass(frozen=True)
class RedisProbe:
    """Healthy when Redis, logged in with `password`, answers PING with PONG."""

    host: str
    port: int
    password: str = field(default="", repr=False)

    def check(self) -> Health:
        try:
            reply = ping(self.host, self.port, self.password)
        except OSError as exc:
            return Health(False, f"{type(exc).__name__}: {exc.strerror or exc}")
        if reply.startswith(b"+PONG"):
            return Health(True, "PONG")
        return Health(False, f"unexpected reply {reply[:40]!r}")


@dataclass(frozen=True)
class LogProbe:
    """Healthy once the log holds `marker` since the last start (e.g. Celery's 'ready.')."""

    log: Path
    marker: str

    def check(self) -> Health:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return Health(False, "no log yet")
        last_start = text.rfind("--- ")
        if self.marker in text[max(last_start, 0) :]:
            return Health(True, f"log says {self.marker!r}")
        return Health(False, f"waiting for {self.marker!r} in the log")


Probe = HttpProbe | RedisProbe | LogProbe


def port_in_use(host: str, port: int) -> bool:
    """True when something already accepts connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False
