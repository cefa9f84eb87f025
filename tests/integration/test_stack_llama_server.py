"""The native llama-server (xllamacpp) answers SIGTERM itself, inside the stack's 10 s grace."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.support.llama import llama_server

pytestmark = pytest.mark.integration


def test_sigterm_stops_the_server_without_a_sigkill(tmp_path: Path) -> None:
    with llama_server(tmp_path, ctx=512, parallel=1) as server:
        # after real work: llama.cpp's threads are up and may be the ones the kernel signals
        for _ in range(3):
            r = httpx.post(
                f"{server.url}/v1/chat/completions",
                headers={"Authorization": f"Bearer {server.api_key}"},
                json={"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4},
                timeout=60,
            )
            assert r.status_code == 200
        popen = server.proc.popen
        popen.send_signal(signal.SIGTERM)  # the process alone, not its group
        started = time.monotonic()
        try:
            code = popen.wait(8)
        except subprocess.TimeoutExpired:
            pytest.fail(f"llama-server ignored SIGTERM for 8 s:\n{server.proc.output()[-2000:]}")
        assert code == 0
        assert time.monotonic() - started < 8
        assert "llama-server: stopping" in server.proc.output()


def test_a_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    import sys

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "openmono.stack.llama_server",
            "--port",
            "1",
            "--api-key",
            "k",
            "--model",
            str(tmp_path / "nope.gguf"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "is not a file" in result.stderr and "Traceback" not in result.stderr


def test_an_empty_key_is_refused(tmp_path: Path) -> None:
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "openmono.stack.llama_server", "--port", "1", "--api-key", ""],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "without an API key" in result.stderr
