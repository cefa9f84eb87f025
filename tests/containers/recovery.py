"""A service crashed from the host, timed until it serves again, with CPU-bound processes beside it.

`crash_and_recover` SIGKILLs the container's PID 1 from the host (a crash: Docker restarts it under
`restart: unless-stopped`; `docker kill` would be a deliberate stop), then asks two things until
the service serves again through the gateway: the request (`attempt`, each answer checked by the
caller) and `docker compose ps` for the service. It returns when a request succeeded and
`docker compose ps` calls the service healthy, with the times measured from the moment the new
process started (Docker's `State.StartedAt`). `docker compose ps` may call the service healthy only
while it serves: a "healthy" answer is checked at once with a request.

`cpu_hogs(n)`: n busy-looping processes (their own process group, killed at the end), the load the
issue's bound is stated for ("two CPU-bound processes running beside it").
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from tests.containers.conftest import Project

# The bound: serving again (and healthy in `docker compose ps`) within this many seconds of
# the process being back.
BOUND_S = 15.0


@contextmanager
def cpu_hogs(n: int = 2) -> Iterator[list[int]]:
    hogs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
        for _ in range(n)
    ]
    try:
        yield [h.pid for h in hogs]
    finally:
        for h in hogs:
            os.killpg(h.pid, signal.SIGKILL)
            h.wait(10)


@dataclass
class Recovery:
    service: str
    served_after_s: float  # first successful request, from the new process's start
    healthy_after_s: float  # first "healthy" in `docker compose ps`, from the same moment
    states: list[tuple[float, str]] = field(default_factory=list)  # (s after the kill, ps says)

    def __str__(self) -> str:
        seen = sorted({s for _, s in self.states})
        return (
            f"{self.service}: serving {self.served_after_s:.1f} s and healthy "
            f"{self.healthy_after_s:.1f} s after its process was back (ps said {seen})"
        )


def _epoch(stamp: str) -> float:
    """Docker's RFC 3339 time with nanoseconds, as seconds since the epoch."""
    head, _, frac = stamp.rstrip("Z").partition(".")
    whole = datetime.fromisoformat(head + "+00:00").timestamp()
    return whole + (float(f"0.{frac}") if frac else 0.0)


def ps_state(project: Project, service: str) -> str:
    """What `docker compose ps` says of `service`: its state, and its health when it has one."""
    row = project.compose().get_container(service, include_all=True)
    return f"{row.State}/{row.Health or '-'}"


def crash_and_recover(
    project: Project, service: str, attempt: Callable[[], bool], timeout_s: float = 180
) -> Recovery:
    """Crash `service` and wait until it serves and is healthy again (see the module docstring).

    `attempt()` sends one request through the gateway, asserts whatever the caller requires of
    its answer, and says whether the service served it.
    """
    state = project.inspect(service)
    before = state["RestartCount"]
    pid = state["State"]["Pid"]  # type: ignore[index]
    assert isinstance(pid, int) and pid > 0 and isinstance(before, int)
    killed = time.time()
    os.kill(pid, signal.SIGKILL)
    # Docker has seen the crash once the container's PID 1 is another process (or none).
    while project.inspect(service)["State"]["Pid"] == pid:  # type: ignore[index]
        assert time.time() - killed < 30, "Docker never noticed the crash"
        time.sleep(0.05)
    states: list[tuple[float, str]] = []
    served_at = healthy_at = None
    while served_at is None or healthy_at is None:
        assert time.time() - killed < timeout_s, f"{service} not back after {timeout_s} s: {states}"
        said = ps_state(project, service)
        states.append((time.time() - killed, said))
        if said.endswith("/healthy"):
            healthy_at = healthy_at or time.time()
            assert attempt(), f"`docker compose ps` says {said} but {service} does not serve"
        if served_at is None and attempt():
            served_at = time.time()
        time.sleep(0.1)
    after = project.inspect(service)
    assert after["RestartCount"] == before + 1, "restarted by Docker, once"
    back = _epoch(str(after["State"]["StartedAt"]))  # type: ignore[index]
    return Recovery(service, served_at - back, healthy_at - back, states)
