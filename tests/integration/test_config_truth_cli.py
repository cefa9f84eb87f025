"""One configuration truth, as real processes: `doctor`, `-p` and `serve` resolve the endpoint, the
key and the ACP token from the same shell variables and the same env file as the stack does."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.support.clean_env import clean_environ
from tests.support.procs import free_port, running
from tests.support.scripted_llm import ScriptedLLM, Turn

pytestmark = pytest.mark.integration

ScriptedFactory = Callable[..., ScriptedLLM]
OPENMONO = [sys.executable, "-m", "openmono.cli"]


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in clean_environ().items() if k != "GATEWAY_PORT"}
    env.update(
        OPENMONO_DATA_DIR=str(tmp_path / "data"),
        OPENMONO_ENV_FILE=str(tmp_path / "compose.env"),
        OPENMONO_LLM_MAX_RETRIES="0",
        HOME=str(tmp_path),
        **extra,
    )
    return env


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*OPENMONO, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_doctor_and_the_agent_follow_gateway_port_from_the_shell(
    scripted_llm: ScriptedFactory, tmp_path: Path
) -> None:
    # the finding: doctor and the agent checked 47480 whatever GATEWAY_PORT said
    llm = scripted_llm([Turn(text="hello from the gateway port")], api_key="k", n_ctx=4096)
    port = llm.url.rsplit(":", 1)[1]
    env = _env(tmp_path, GATEWAY_PORT=port, LLAMA_API_KEY="k")
    doctor = _run(["doctor"], env, tmp_path)
    assert f"endpoint http://127.0.0.1:{port} (default from GATEWAY_PORT (environment))" in (
        doctor.stdout
    )
    assert f"✓ endpoint: http://127.0.0.1:{port}/health → 200" in doctor.stdout, doctor.stdout
    assert "✓ model:" in doctor.stdout
    once = _run(["-p", "hi"], env, tmp_path)
    assert once.returncode == 0, once.stderr
    assert "hello from the gateway port" in once.stdout


def test_the_key_and_port_come_from_the_env_file_as_the_stack_reads_them(
    scripted_llm: ScriptedFactory, tmp_path: Path
) -> None:
    llm = scripted_llm([Turn(text="read the env file")], api_key="file-key", n_ctx=4096)
    port = llm.url.rsplit(":", 1)[1]
    (tmp_path / "compose.env").write_text(f"GATEWAY_PORT={port}\nLLAMA_API_KEY=file-key\n")
    once = _run(["-p", "hi"], _env(tmp_path), tmp_path)
    assert once.returncode == 0, once.stderr
    assert "read the env file" in once.stdout


def test_serve_wants_the_one_acp_token_of_the_env_file(tmp_path: Path) -> None:
    # the finding: natively the .env token got 401 (serve used <data dir>/acp-token instead)
    (tmp_path / "ws").mkdir()
    (tmp_path / "compose.env").write_text("OPENMONO_ACP_TOKEN=the-one-token\n")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [*OPENMONO, "-C", str(tmp_path / "ws"), "serve", "--acp-port", str(port)]
    with running(
        cmd, tmp_path / "serve.log", _env(tmp_path), ready_url=f"{base}/api/v1/discovery"
    ) as proc:
        ok = httpx.get(
            f"{base}/api/v1/sessions",
            headers={"Authorization": "Bearer the-one-token"},
            timeout=10,
        )
        assert ok.status_code == 200, ok.text
        bad = httpx.get(
            f"{base}/api/v1/sessions",
            headers={"Authorization": "Bearer a-stale-second-token"},
            timeout=10,
        )
        assert bad.status_code == 401
        assert "(bearer: OPENMONO_ACP_TOKEN" in proc.output()
