"""Bring the services up after `openmono setup`: the stack that runs already, else compose where
a Docker engine answers, else the native stack (docs/architecture.md §9). Either way the gateway is
(re)started so it reads the new `.env`.

`pick()` decides for `--via auto` and says what it found (a running native gateway and its pid, a
running compose gateway, a Docker engine that answers or none), so every message names the fact
the choice rests on.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from openmono.setup._errors import SetupError

StartWith = Literal["compose", "native", "none"]
Say = Callable[[str], None]

# `setup <target>` -> the compose profile that runs it (and the gateway, and llama-server).
PROFILES = {"gateway": "server", "search": "search", "scraper": "scraper"}
_DOCKER_INFO_TIMEOUT_S = 15.0
_COMPOSE_UP_TIMEOUT_S = 900.0


def run_quietly(
    argv: list[str], timeout: float = _DOCKER_INFO_TIMEOUT_S
) -> subprocess.CompletedProcess[str] | None:
    """`argv` with its output captured, in its own session; None when it could not be run."""
    try:
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            start_new_session=True,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def docker_answers() -> bool:
    """True when a Docker engine answers `docker info` (the CLI alone is not enough)."""
    docker = shutil.which("docker")
    done = run_quietly([docker, "info"]) if docker is not None else None
    return done is not None and done.returncode == 0


def compose_command(root: Path, env_file: Path, profile: str) -> list[str]:
    """`docker compose ... --profile P up -d` (the v1 `docker-compose` where no plugin exists)."""
    docker = shutil.which("docker")
    plugin = run_quietly([docker, "compose", "version"]) if docker is not None else None
    base = [docker, "compose"] if docker is not None and plugin and plugin.returncode == 0 else []
    if not base:
        legacy = shutil.which("docker-compose")
        base = [legacy] if legacy else ["docker", "compose"]
    compose_file = root / "compose" / "docker-compose.yml"
    return [
        *base,
        "--env-file",
        str(env_file),
        "-f",
        str(compose_file),
        "--profile",
        profile,
        "up",
        "-d",
    ]


@dataclass(frozen=True)
class Choice:
    """Which stack `--via` means here, and the fact that decided it."""

    mode: Literal["compose", "native"]
    why: str


def compose_base(root: Path, env_file: Path) -> list[str]:
    """`docker compose --env-file ... -f ...` with no subcommand."""
    return compose_command(root, env_file, "server")[:-4]


def compose_gateway_runs(root: Path, env_file: Path) -> bool:
    """True when this checkout's compose project has a running gateway (its caddy)."""
    done = run_quietly([*compose_base(root, env_file), "ps", "--status", "running", "-q", "caddy"])
    return done is not None and done.returncode == 0 and bool(done.stdout.strip())


def native_gateway_pid(root: Path) -> int | None:
    """The pid of this checkout's native gateway when it runs (started by `openmono up`)."""
    from openmono.stack import GATEWAY, Context, load_settings, running_pid

    return running_pid(Context(root, load_settings(root)), GATEWAY)


def pick(root: Path, env_file: Path, via: str) -> Choice:
    """compose or native for `via`: as named, else the stack whose gateway runs, else compose when
    a Docker engine answers, else native."""
    if via in ("compose", "native"):
        return Choice(via, f"--via {via}")  # type: ignore[arg-type]
    pid = native_gateway_pid(root)
    if pid is not None:
        return Choice("native", f"the native gateway runs (pid {pid})")
    if not docker_answers():
        return Choice("native", "no gateway runs and no Docker engine answers")
    if compose_gateway_runs(root, env_file):
        return Choice("compose", "the compose gateway runs")
    return Choice("compose", "no gateway runs and a Docker engine answers")


@dataclass(frozen=True)
class BringUp:
    """How the services will be started (`mode` none: `--no-start`)."""

    mode: StartWith
    profile: str
    command: list[str]
    why: str = ""

    def describe(self) -> str:
        """What is started, after the verb "start"."""
        if self.mode == "none":
            return "nothing (--no-start)"
        because = f" ({self.why})" if self.why else ""
        if self.mode == "compose":
            return f"with compose{because}: " + " ".join(self.command)
        return f"the native stack{because}: gateway restarted, `openmono up`"


def run_compose(bring: BringUp, say: Say) -> None:
    say(f"starting: {' '.join(bring.command)}")
    try:
        done = subprocess.run(
            bring.command, timeout=_COMPOSE_UP_TIMEOUT_S, start_new_session=True, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SetupError(f"docker compose failed: {exc}") from exc
    if done.returncode != 0:
        raise SetupError(f"docker compose exited with {done.returncode}")


def run_native(root: Path, say: Say) -> None:
    """Restart the native gateway (it reads `.env` only at start), then `openmono up`."""
    from openmono.stack import GATEWAY, Context, StackError, load_settings, restart

    try:
        restart(Context(root, load_settings(root)), [GATEWAY.name], say)
    except StackError as exc:
        raise SetupError(str(exc)) from exc
