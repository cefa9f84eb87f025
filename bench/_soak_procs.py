"""The soak's view of the native stack's processes: each service's tree, its RSS and open fds.

A service is the process its pid file names (`<data dir>/stack/pids/<name>.json`) and everything
below it (the worker's pool, a browser under the scrape service). A "life" is one process from its
first sample to its last: a kill and the restart that follows begin new ones, and so does a pool
process the worker recycles. Flatness is judged per life, from a stretch after its warm-up to the
last (see `Life.judged`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import redis

from tests.support.procs import descendants, process_children


@dataclass(frozen=True)
class ProcSample:
    pid: int
    name: str
    rss_kb: int
    fds: int


@dataclass(frozen=True)
class Snapshot:
    t: float  # seconds since the soak started
    service: str
    root: int  # the pid file's process
    procs: tuple[ProcSample, ...]

    @property
    def rss_mb(self) -> float:
        return sum(p.rss_kb for p in self.procs) / 1024

    @property
    def fds(self) -> int:
        return sum(p.fds for p in self.procs)


@dataclass(frozen=True)
class RedisSample:
    """What Redis holds: used memory, keys, and how many of them expire (results, claims)."""

    t: float
    used_mb: float
    keys: int
    expiring: int


def redis_sample(url: str, t: float) -> RedisSample | None:
    try:
        with redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2) as client:
            memory = client.info("memory")
            spaces = client.info("keyspace")
    except redis.RedisError:
        return None  # killed: the kill window says so
    keys = sum(int(db["keys"]) for db in spaces.values())
    expiring = sum(int(db["expires"]) for db in spaces.values())
    return RedisSample(t, int(memory["used_memory"]) / 2**20, keys, expiring)


def pid_of(stack_dir: Path, service: str) -> int | None:
    try:
        pid = int(json.loads((stack_dir / "pids" / f"{service}.json").read_text())["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return pid if Path(f"/proc/{pid}").exists() else None


def _sample(pid: int) -> ProcSample | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
    values = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    if values.get("State", "").strip().startswith("Z"):
        return None  # killed, not yet reaped: no longer the service
    rss = int(values.get("VmRSS", "0 kB").split()[0])
    return ProcSample(pid, values.get("Name", "?").strip(), rss, fds)


def snapshot(stack_dir: Path, services: list[str], t: float) -> list[Snapshot]:
    """One snapshot per running service: its process and every descendant."""
    children = process_children()
    found = []
    for service in services:
        root = pid_of(stack_dir, service)
        if root is None:
            continue
        tree = [root, *descendants(root, children)]
        procs = tuple(s for pid in tree if (s := _sample(pid)) is not None)
        if procs and procs[0].pid == root:
            found.append(Snapshot(t, service, root, procs))
    return found


@dataclass
class Life:
    """One process from its first sample to its last (a kill, a recycled pool process: another
    pid, another life), with its samples as (seconds, RSS MB, open fds)."""

    service: str
    pid: int
    name: str
    points: list[tuple[float, float, int]] = field(default_factory=list)

    def judged(self, warmup_s: float) -> tuple[Point, Point] | None:
        """(start, end) of the life after its warm-up: the highest values in the first third of
        the samples after the warm-up and in the last third. A leak raises the last third above
        the first; what comes and goes (an open connection) reaches the same highs in both.
        None when the life was too short to tell."""
        start = self.points[0][0] + warmup_s
        after = [p for p in self.points if p[0] >= start]
        if len(after) < 3:
            return None
        third = max(1, len(after) // 3)
        return Point.of(after[:third]), Point.of(after[-third:])


@dataclass(frozen=True)
class Point:
    t: float
    rss_mb: float
    fds: int

    @classmethod
    def of(cls, points: list[tuple[float, float, int]]) -> Point:
        return cls(points[-1][0], max(p[1] for p in points), max(p[2] for p in points))


def lives(snaps: list[Snapshot]) -> list[Life]:
    """Every process's life, in the order they were first seen."""
    by_key: dict[tuple[str, int], Life] = {}
    for snap in sorted(snaps, key=lambda s: s.t):
        for proc in snap.procs:
            life = by_key.setdefault(
                (snap.service, proc.pid), Life(snap.service, proc.pid, proc.name)
            )
            life.points.append((snap.t, proc.rss_kb / 1024, proc.fds))
    return list(by_key.values())


def drift(start: float, end: float) -> float:
    """Change from `start` to `end` as a fraction of `start`."""
    return (end - start) / start if start else 0.0
