"""The soak's load: one asyncio loop per route, every request timed and judged.

Routes (through the gateway with its bearer, except the tools, which go through Redis):
  llm        POST /v1/chat/completions, streamed, 16 tokens at most; ok = 200 ending in [DONE]
  scrape     POST /scrape of a local page, fetched afresh each time; ok = 200 with its sentence
  firecrawl  POST /firecrawl/v1/scrape of a local page with maxAge 1 h (after the first, from the
             scrape cache in Redis); ok = success with the page's code snippet
  tools      Bash, FileRead and Grep through Celery (the agent's CeleryExecutor); ok = the output
             the call must give
Each request ends as a `Sample`: its route, when it started (seconds into the soak), how long it
took, and its kind: "ok", or what went wrong ("502 upstream_unavailable", "ConnectError", the
first words of a tool's error).
"""

from __future__ import annotations

import asyncio
import itertools
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
from openmono.executor.celery import CeleryExecutor
from openmono_contracts import ToolRequest

ARTICLE_SENTINEL = "Tide clocks count the lunar day"
CODE_SNIPPET = "return hours % 12.42"


@dataclass(frozen=True)
class Sample:
    route: str
    t: float
    latency_s: float
    kind: str

    @property
    def ok(self) -> bool:
        return self.kind == "ok"


@dataclass
class Target:
    gateway: str
    key: str
    site: str  # the local pages
    broker_url: str
    workspace: Path
    started: float  # time.monotonic() at the soak's start

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


def http_kind(resp: httpx.Response) -> str:
    """`STATUS code-or-error` of a failed answer (the body's own error name when it has one)."""
    try:
        body = resp.json()
    except ValueError:
        return f"{resp.status_code} non-JSON"
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):  # llama-server's own error object
        error = error.get("type") or error.get("message")
    return f"{resp.status_code} {str(error)[:40]}"


def tool_kind(error: str | None) -> str:
    """A tool error without what differs per call (ids, numbers), so equal errors count as one."""
    text = re.sub(r"[0-9a-f]{8,}|\d+(\.\d+)?", "N", error or "failed")
    return text.split(":")[0][:60]


async def _llm(client: httpx.AsyncClient, t: Target) -> str:
    body = {
        "messages": [{"role": "user", "content": "Name a colour."}],
        "max_tokens": 16,
        "temperature": 0,
        "stream": True,
    }
    async with client.stream(
        "POST", f"{t.gateway}/v1/chat/completions", json=body, headers=t.auth, timeout=120
    ) as resp:
        if resp.status_code != 200:
            await resp.aread()
            return http_kind(resp)
        last = ""
        async for line in resp.aiter_lines():
            if line.startswith("data: "):
                last = line
        return "ok" if last == "data: [DONE]" else "stream without [DONE]"


async def _scrape(client: httpx.AsyncClient, t: Target) -> str:
    body = {"url": f"{t.site}/article"}
    resp = await client.post(f"{t.gateway}/scrape", json=body, headers=t.auth, timeout=90)
    if resp.status_code != 200:
        return http_kind(resp)
    return "ok" if ARTICLE_SENTINEL in resp.json().get("content", "") else "wrong content"


async def _firecrawl(client: httpx.AsyncClient, t: Target) -> str:
    body = {"url": f"{t.site}/code", "formats": ["markdown"], "maxAge": 3_600_000}
    resp = await client.post(
        f"{t.gateway}/firecrawl/v1/scrape", json=body, headers=t.auth, timeout=90
    )
    if resp.status_code != 200:
        return http_kind(resp)
    data = resp.json().get("data") or {}
    return "ok" if CODE_SNIPPET in (data.get("markdown") or "") else "wrong content"


_TOOL_CALLS = itertools.cycle(
    [
        ("Bash", {"command": "echo $((6 * 7))"}, "42\n[exit code 0]"),
        ("FileRead", {"file_path": "notes.txt"}, "the soak's notes"),
        ("Grep", {"pattern": "soak", "path": "."}, "notes.txt"),
    ]
)


async def _tool(ex: CeleryExecutor, t: Target) -> str:
    tool, params, wanted = next(_TOOL_CALLS)
    req = ToolRequest(
        tool=tool,
        params=params,
        call_id=f"soak-{uuid.uuid4().hex[:10]}",
        session_id="soak",
        workspace=str(t.workspace),
        timeout_s=30,
    )
    result = await ex.run(req)
    if not result.ok:
        return f"{tool}: {tool_kind(result.error)}"
    return "ok" if wanted in result.output else f"{tool}: wrong output"


async def _loop(
    route: str,
    t: Target,
    one: Callable[[], Awaitable[str]],
    pause_s: float,
    out: list[Sample],
    stop: asyncio.Event,
) -> None:
    while not stop.is_set():
        start = time.monotonic()
        try:
            kind = await one()
        except Exception as exc:  # transport errors above all; any other is a finding too
            kind = type(exc).__name__
        out.append(Sample(route, start - t.started, time.monotonic() - start, kind))
        if kind != "ok":
            await asyncio.sleep(0.5)  # a down service is asked again soon, not in a tight loop
        with_pause = asyncio.ensure_future(stop.wait())
        await asyncio.wait({with_pause}, timeout=pause_s)
        with_pause.cancel()


async def run_load(t: Target, stop: asyncio.Event, out: list[Sample]) -> None:
    """Every route's loops until `stop` is set (one each, two for the tools): a steady load, not a
    throughput test; the machine is shared."""
    (t.workspace / "notes.txt").write_text("the soak's notes\n")
    ex = CeleryExecutor(t.broker_url)
    limits = httpx.Limits(max_connections=16, max_keepalive_connections=8)
    async with httpx.AsyncClient(limits=limits) as client:
        loops = [
            _loop("llm", t, lambda: _llm(client, t), 1.0, out, stop),
            _loop("scrape", t, lambda: _scrape(client, t), 0.5, out, stop),
            _loop("firecrawl", t, lambda: _firecrawl(client, t), 0.5, out, stop),
            *(_loop("tools", t, lambda: _tool(ex, t), 0.5, out, stop) for _ in range(2)),
        ]
        try:
            await asyncio.gather(*loops)
        finally:
            await ex.aclose()
