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


def stack_threads(replicas: int) -> int:
    """The threads the native stack gives each of `replicas` local llama-servers with
    LLAMA_THREADS unset (StackSettings.threads_per_replica: the cores split evenly, 0 for one)."""
    from openmono.stack.settings import StackSettings
    from openmono.stack.spec import cores

    s = StackSettings(_env_file=None, llama_replicas=replicas, llama_threads=0, llama_upstream="")  # type: ignore[call-arg]
    return s.threads_per_replica(cores())


@contextmanager
def llama_server(
    tmp: Path,
    api_key: str = "test-llama-key",
    ctx: int = 2048,
    parallel: int = 2,
    model: Path | None = None,
    template: str | None = None,
    port: int | None = None,
    threads: int = 0,
) -> Iterator[LlamaServer]:
    """`model`: another GGUF than the bundled one; `template`: its chat template (a shipped name,
    a path, or "none" for the GGUF's own); `port`: a given one (a replica started again where a
    router or gateway already expects it), else a free one; `threads`: 0 is llama.cpp's own
    count (one per core)."""
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
    if threads:
        cmd += ["--threads", str(threads)]
    url = f"http://127.0.0.1:{port}"
    with running(cmd, tmp / f"llama-{port}.log", ready_url=f"{url}/health", timeout_s=120) as p:
        yield LlamaServer(url, api_key, p)
