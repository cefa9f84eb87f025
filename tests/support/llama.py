"""A real llama.cpp server (xllamacpp + SmolLM2-135M) on a free port, for tests about the server."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.procs import Proc, free_port, running


@dataclass
class LlamaServer:
    url: str
    api_key: str
    proc: Proc


@contextmanager
def llama_server(
    tmp: Path,
    api_key: str = "test-llama-key",
    ctx: int = 2048,
    parallel: int = 2,
    model: Path | None = None,
    template: str | None = None,
    port: int | None = None,
) -> Iterator[LlamaServer]:
    """`model`: another GGUF than the bundled one; `template`: its chat template (a shipped name,
    a path, or "none" for the GGUF's own); `port`: a given one (a replica started again where a
    router or gateway already expects it), else a free one."""
    port = port or free_port()
    cmd = [
        sys.executable,
        "-m",
        "openmono.stack.llama_server",
        "--port",
        str(port),
        "--api-key",
        api_key,
        "--ctx-size",
        str(ctx),
        "--parallel",
        str(parallel),
    ]
    if model is not None:
        cmd += ["--model", str(model)]
    if template is not None:
        cmd += ["--chat-template-file", template]
    url = f"http://127.0.0.1:{port}"
    with running(cmd, tmp / f"llama-{port}.log", ready_url=f"{url}/health", timeout_s=120) as p:
        yield LlamaServer(url, api_key, p)
