"""The real model end to end: `openmono -p "say hi"` on SmolLM2, direct and via the gateway."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.support.clean_env import clean_environ
from tests.support.gateway import gateway
from tests.support.llama import LlamaServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

OPENMONO = str(Path(sys.executable).parent / "openmono")


def real_n_ctx(llama: LlamaServer) -> int:
    props = httpx.get(
        f"{llama.url}/props", headers={"Authorization": f"Bearer {llama.api_key}"}, timeout=10
    ).json()
    return int(props["default_generation_settings"]["n_ctx"])


def say_hi(endpoint: str, key: str, tmp: Path) -> tuple[int, list[dict[str, object]], str]:
    env = clean_environ()
    env.update(
        OPENMONO_DATA_DIR=str(tmp / "data"),
        LLAMA_API_KEY=key,
        OPENMONO_LLM_MAX_TOKENS="24",
        OPENMONO_LLM_TEMPERATURE="0",
        HOME=str(tmp),
    )
    proc = subprocess.Popen(
        [OPENMONO, "--endpoint", endpoint, "-p", "say hi", "--output-format", "stream-json"],
        env=env, cwd=tmp, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        out, err = proc.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    return proc.returncode, [json.loads(line) for line in out.splitlines() if line], err


def check_answer(code: int, events: list[dict[str, object]], err: str, n_ctx: int) -> None:
    assert code == 0, err
    assert events[0]["kind"] == "session" and events[0]["n_ctx"] == n_ctx
    text = "".join(str(e["text"]) for e in events if e["kind"] == "text")
    assert text.strip(), events
    assert sum(e["kind"] == "text" for e in events) > 1  # streamed, not one block
    done = events[-1]
    assert done["kind"] == "done" and done["reason"] == "stop" and done["text"] == text
    usage = [e for e in events if e["kind"] == "usage"]
    assert usage and int(usage[-1]["completion_tokens"]) > 0  # type: ignore[call-overload]


def test_say_hi_against_the_real_model(llama: LlamaServer, tmp_path: Path) -> None:
    n_ctx = real_n_ctx(llama)
    code, events, err = say_hi(llama.url, llama.api_key, tmp_path)
    check_answer(code, events, err, n_ctx)


def test_say_hi_through_the_gateway(llama: LlamaServer, tmp_path: Path) -> None:
    n_ctx = real_n_ctx(llama)
    with gateway(tmp_path, api_key=llama.api_key, llama_upstream=llama.url) as gw:
        code, events, err = say_hi(gw.url, llama.api_key, tmp_path)
        check_answer(code, events, err, n_ctx)
        bad_code, bad_events, _ = say_hi(gw.url, "not-the-key", tmp_path)
        doctor = subprocess.run(
            [OPENMONO, "--endpoint", gw.url, "doctor"],
            env={**os.environ, "LLAMA_API_KEY": llama.api_key, "OPENMONO_DATA_DIR": str(tmp_path)},
            cwd=tmp_path, capture_output=True, text=True, timeout=120, start_new_session=True,
        )  # fmt: skip
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "✓ services" in doctor.stdout and "llm=true" in doctor.stdout
    assert f"n_ctx {n_ctx}" in doctor.stdout
    family = next(line for line in doctor.stdout.splitlines() if "model family" in line)
    assert "SmolLM · ChatML template" in family and "template: " in family, family
    assert bad_code == 1
    assert bad_events[-1]["reason"] == "error" and "AuthError" in str(bad_events[-1]["error"])
