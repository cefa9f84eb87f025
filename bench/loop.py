"""Loop overhead per iteration with a zero-latency scripted `Model` (in-process, no HTTP).

One iteration = stream a reply holding one tool call, record it, run the call through the whole
pipeline (parse, schema, workspace guard, mode, permissions, executor), record the result. The tool
is `Glob` on a tiny workspace; its own cost, measured in the same run by calling `run_tool`
directly, is the baseline. Printed: per-iteration p50/p99 with the session file fsynced per message
(the product's setting) and without a session file, the baseline, and the overhead (target ≤ 5 ms).

    uv run python bench/loop.py [--turns 10] [--iterations 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from openmono.agent import open_agent
from openmono.config import load_settings
from openmono.llm import (
    ChatMessage,
    Done,
    StreamEvent,
    TextDelta,
    ToolCallComplete,
    ToolSpec,
    Usage,
)
from openmono_contracts import ToolRequest
from openmono_worker import WorkerSettings, run_tool

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the in-process model base lives with the test support

from tests.support.scripted_model import InProcessModel  # noqa: E402


class ZeroLatencyModel(InProcessModel):
    """Answers `iterations` times with one Glob call, then with a short text; no I/O at all."""

    def __init__(self, iterations: int) -> None:
        super().__init__("zero", 1_000_000)
        self.iterations = iterations
        self.calls = 0

    async def reply(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec] | None
    ) -> AsyncIterator[StreamEvent]:
        n = self.calls
        self.calls += 1
        if n % (self.iterations + 1) == self.iterations:
            yield TextDelta(text="done")
        else:
            args = json.dumps({"pattern": f"*{n}.txt"})
            yield ToolCallComplete(index=0, id=f"call_{n}", name="Glob", arguments=args)
        yield Usage(prompt_tokens=100 + n, completion_tokens=10)
        yield Done(finish_reason="stop")


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else values[0]


def show(name: str, values: list[float]) -> None:
    print(f"{name:44s} p50 {statistics.median(values):7.3f} ms  p99 {pct(values, 99):7.3f} ms")


async def per_iteration(
    ws: Path, data: Path, turns: int, iterations: int, persist: bool
) -> list[float]:
    settings = load_settings(
        ws, overrides={"data_dir": str(data), "max_iterations": iterations + 5}
    )
    model = ZeroLatencyModel(iterations)
    agent = await open_agent(settings, ws, model=model)
    if not persist:
        agent.writer.close()
        agent.loop.conv.writer = None
    out: list[float] = []
    try:
        for t in range(turns):
            agent.loop.conv.messages.clear()  # every turn starts from the same small context
            start = time.perf_counter()
            done = await agent.run_turn(f"turn {t}")
            elapsed = (time.perf_counter() - start) * 1000
            assert done.reason == "stop" and done.iterations == iterations + 1, done
            out.append(elapsed / (iterations + 1))
    finally:
        await agent.aclose()
        await agent.executor.aclose()
    return out


def tool_baseline(ws: Path, data: Path, n: int) -> list[float]:
    settings = WorkerSettings(data_dir=data)
    out = []
    for i in range(n):
        req = ToolRequest(tool="Glob", params={"pattern": f"*{i}.txt"}, call_id=f"b{i}",
                          session_id="bench", workspace=str(ws))  # fmt: skip
        start = time.perf_counter()
        run_tool(req, settings=settings)
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=50)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-loop-"))
    ws = tmp / "ws"
    ws.mkdir()
    for i in range(20):
        (ws / f"f{i}.txt").write_text("x\n")
    data = tmp / "data"
    asyncio.run(per_iteration(ws, data, 1, 5, True))  # warm-up: imports, thread pool, caches
    base = tool_baseline(ws, data, args.turns * args.iterations)
    fsynced = asyncio.run(per_iteration(ws, data, args.turns, args.iterations, True))
    memory = asyncio.run(per_iteration(ws, data, args.turns, args.iterations, False))
    print(f"loop overhead, {args.turns} turns × {args.iterations} tool iterations (Glob)")
    show("baseline: run_tool(Glob) called directly", base)
    show("iteration, session fsynced per message", fsynced)
    show("iteration, no session file", memory)
    b = statistics.median(base)
    for name, values in (("fsynced", fsynced), ("no session file", memory)):
        overhead = statistics.median(values) - b
        ratio = statistics.median(values) / b
        verdict = "ok" if overhead <= 5.0 else "OVER TARGET"
        print(f"overhead ({name}): {overhead:.3f} ms/iteration (target ≤ 5 ms: {verdict}), "
              f"{ratio:.1f}x the bare tool")  # fmt: skip
    sys.stdout.flush()


if __name__ == "__main__":
    main()
