"""Real processes for tests: free ports, process groups, health polling, logs on failure."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent


def compose_v2() -> str | None:
    """Docker Compose v2's standalone binary: the wheel's in the checkout's venv first (Debian's
    `docker-compose` on PATH outside `uv run` is v1, which knows none of v2's options)."""
    venv = ROOT / ".venv" / "bin" / "docker-compose"
    return str(venv) if venv.is_file() else shutil.which("docker-compose")


_GIVEN: set[int] = set()


def free_port() -> int:
    """A TCP port that was free on 127.0.0.1 a moment ago (the kernel picked it), and not one this
    process was given before: the kernel may hand a released port out again at once, and a test
    that asks for several ports in a row once got one number twice (KEYS_PORT, GATEWAY_TLS_PORT).
    """
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in _GIVEN:
            _GIVEN.add(port)
            return port
    raise RuntimeError("the kernel gave 100 ports this process was already given")


@dataclass
class Proc:
    """A process we started in its own process group, with its combined output in `log`."""

    popen: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, grace_s: float = 5.0) -> None:
        """SIGTERM the whole group, then SIGKILL it if it lingers."""
        if self.popen.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGTERM)
            with suppress(subprocess.TimeoutExpired):
                self.popen.wait(grace_s)
        with suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(5)


def stop_all(procs: Sequence[Proc], grace_s: float = 5.0) -> None:
    """`Proc.stop` for several at once: every group gets its SIGTERM first, so their shutdowns
    (a Celery worker's warm shutdown takes seconds) overlap; each still has `grace_s` from its
    SIGTERM before the SIGKILL."""
    for proc in procs:
        if proc.popen.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(proc.popen.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for proc in procs:
        with suppress(subprocess.TimeoutExpired):
            proc.popen.wait(max(0.0, deadline - time.monotonic()))
        with suppress(ProcessLookupError):
            os.killpg(proc.popen.pid, signal.SIGKILL)
        proc.popen.wait(5)


def start(
    cmd: Sequence[str],
    log: Path,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Proc:
    """Start `cmd` in a new session (own process group), output to `log`."""
    full_env = dict(os.environ)
    full_env["PATH"] = f"{VENV_BIN}{os.pathsep}{full_env.get('PATH', '')}"
    if env:
        full_env.update(env)
    log.parent.mkdir(parents=True, exist_ok=True)
    fh = log.open("wb")
    popen = subprocess.Popen(
        list(cmd),
        stdout=fh,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=full_env,
        cwd=str(cwd or ROOT),
        start_new_session=True,
    )
    fh.close()
    return Proc(popen, log)


def wait_until(
    check: Callable[[], bool], timeout_s: float, what: str, proc: Proc | None = None
) -> None:
    """Poll `check` until it is true; fail with the process's log if it dies or time runs out."""
    deadline = time.monotonic() + timeout_s
    delay = 0.02
    while time.monotonic() < deadline:
        if proc is not None and not proc.alive():
            raise RuntimeError(
                f"{what}: process exited ({proc.popen.returncode}):\n{proc.output()}"
            )
        try:
            if check():
                return
        except (httpx.HTTPError, OSError):
            pass
        time.sleep(delay)
        delay = min(delay * 1.5, 0.25)
    tail = proc.output()[-4000:] if proc else ""
    raise TimeoutError(f"{what}: not ready after {timeout_s}s\n{tail}")


def wait_http_ok(url: str, timeout_s: float, proc: Proc | None = None, **kw: object) -> None:
    """Wait until GET `url` answers 200."""

    def ok() -> bool:
        return httpx.get(url, timeout=2.0, **kw).status_code == 200  # type: ignore[arg-type]

    wait_until(ok, timeout_s, f"GET {url}", proc)


@contextmanager
def running(
    cmd: Sequence[str],
    log: Path,
    env: Mapping[str, str] | None = None,
    ready_url: str | None = None,
    timeout_s: float = 60.0,
) -> Iterator[Proc]:
    """Context manager: start, wait for `ready_url` (if any), always stop the whole group."""
    proc = start(cmd, log, env)
    try:
        if ready_url:
            wait_http_ok(ready_url, timeout_s, proc)
        yield proc
    finally:
        proc.stop()


def process_children() -> dict[int, list[int]]:
    """Parent pid -> the pids of its live children, read once from /proc (zombies left out: they
    are exited processes whose parent has not collected them yet)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # it exited while we looked
        # the command name is in parentheses and may hold spaces: split after the last ')'
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def descendants(root: int, children: Mapping[int, list[int]] | None = None) -> list[int]:
    """Every live process below `root`, children before their own children. `children`: a map
    from `process_children()` to reuse for several roots."""
    tree = process_children() if children is None else children
    found: list[int] = []
    todo = list(tree.get(root, []))
    while todo:
        pid = todo.pop(0)
        if pid not in found:
            found.append(pid)
            todo.extend(tree.get(pid, []))
    return found
