"""What the editor surfaces add per turn: ACP over stdio and over HTTP/SSE vs the loop in-process.

Every surface runs the same one-reply turn ("ok", no tools) against the scripted OpenAI-compatible
server on 127.0.0.1 (real HTTP/SSE), so the difference is the surface: JSON-RPC over a pipe plus
the update stream (stdio), or an HTTP request plus the SSE stream (serve). The baseline is
`Agent.run_turn` in this process, measured in the same run. Printed: p50/p99 per turn and the
overhead of each surface over the baseline.

    uv run python bench/editors.py [--turns 40]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from acp import text_block  # noqa: E402
from openmono.agent import open_agent  # noqa: E402
from openmono.config import load_settings  # noqa: E402

from tests.support.acp_client import acp_agent  # noqa: E402
from tests.support.procs import free_port, running  # noqa: E402
from tests.support.scripted_llm import ScriptedLLM, Turn  # noqa: E402

KEY = "bench-key"
TOKEN = "bench-token"


def summary(name: str, samples: list[float], base: float | None = None) -> float:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    extra = f"  overhead {p50 - base:+.2f} ms  ratio {p50 / base:.2f}x" if base else ""
    print(f"{name:<22} p50 {p50:7.2f} ms  p99 {p99:7.2f} ms{extra}")
    return p50


def env_for(llm: ScriptedLLM, data: Path) -> dict[str, str]:
    data.mkdir(parents=True, exist_ok=True)
    return {
        "OPENMONO_DATA_DIR": str(data),
        "OPENMONO_LLM_ENDPOINT": llm.url,
        "OPENMONO_LLM_API_KEY": KEY,
        "OPENMONO_LLM_CONTEXT_WINDOW": "1000000",
    }


async def in_process(llm: ScriptedLLM, ws: Path, data: Path, turns: int) -> list[float]:
    os.environ.update(env_for(llm, data))
    agent = await open_agent(load_settings(ws), ws)
    out = []
    try:
        for _ in range(turns):
            t0 = time.perf_counter()
            await agent.run_turn("say ok")
            out.append((time.perf_counter() - t0) * 1000)
    finally:
        await agent.aclose()
    return out


async def over_stdio(llm: ScriptedLLM, ws: Path, data: Path, turns: int) -> list[float]:
    out = []
    async with acp_agent(env_for(llm, data), ws, data / "acp.log") as (conn, _client):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        for _ in range(turns):
            t0 = time.perf_counter()
            await conn.prompt(session_id=sid, prompt=[text_block("say ok")])
            out.append((time.perf_counter() - t0) * 1000)
    return out


def over_http(llm: ScriptedLLM, ws: Path, data: Path, turns: int) -> list[float]:
    port = free_port()
    base = f"http://127.0.0.1:{port}/api/v1"
    cmd = [sys.executable, "-m", "openmono.cli", "-C", str(ws), "serve", "--acp-port", str(port),
           "--token", TOKEN]  # fmt: skip
    auth = {"Authorization": f"Bearer {TOKEN}"}
    out = []
    turn = {"prompt": "ok"}
    with (
        running(cmd, data / "serve.log", env_for(llm, data), ready_url=f"{base}/discovery"),
        httpx.Client(headers=auth, timeout=60) as client,
    ):
        sid = client.post(f"{base}/sessions", json={}).json()["session_id"]
        for _ in range(turns):
            t0 = time.perf_counter()
            with client.stream("POST", f"{base}/sessions/{sid}/turn", json=turn) as r:
                for _chunk in r.iter_bytes():
                    pass
            out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    n = args.turns
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = root / "ws"
        ws.mkdir()
        servers = [ScriptedLLM.start([Turn(text="ok")] * (n + 2), api_key=KEY) for _ in range(3)]
        try:
            base = asyncio.run(in_process(servers[0], ws, root / "d0", n))
            stdio = asyncio.run(over_stdio(servers[1], ws, root / "d1", n))
            http = over_http(servers[2], ws, root / "d2", n)
        finally:
            for s in servers:
                with contextlib.suppress(Exception):
                    s.stop()
    print(f"{n} turns each, one short reply, scripted server on loopback")
    b = summary("in-process (baseline)", base)
    summary("ACP over stdio", stdio, b)
    summary("ACP over HTTP/SSE", http, b)


if __name__ == "__main__":
    main()
