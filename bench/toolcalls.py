"""Text tool-call recovery over turn-sized streams (target: ≤ 100 µs median), against baselines.

Each turn is ~2-4 KB of assistant text streamed as ~4-character deltas, the way a small model
writes it. Per turn we time `recover_tool_calls(text, tools)` on the assembled text (what the tool
protocol runs once the stream ends) and, as the baseline measured in the same run, joining the
deltas into that text (work done anyway). Also timed: the whole per-turn cost between the socket
and the loop, the client's `TurnAssembler` fed every delta chunk and the tool protocol's reading of
its events (`PromptedTools`: the markup held back, the calls read from the text), against a bare
`json.loads` of each chunk.

    uv run python bench/toolcalls.py
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable

from openmono.llm import ToolSpec, recover_tool_calls
from openmono.llm._assemble import TurnAssembler
from openmono.llm._tools import _Reading

N = 3000
TOOLS = [
    ToolSpec(
        name=name,
        parameters={
            "type": "object",
            "properties": {
                "file_path": {"type": "string"},
                "content": {"type": "string"},
                "offset": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "pattern": {"type": "string"},
                "case_insensitive": {"type": "boolean"},
            },
        },
    )
    for name in ("FileRead", "FileWrite", "FileEdit", "Glob", "Grep", "Bash", "ListDirectory")
]
PROSE = (
    "I looked at the failing test. The parser reads the header before checking the length, so an "
    "empty file raises IndexError instead of the friendly error we want. I'll fix the check and "
    "add a regression test for the empty case, then run the suite again.\n\n"
) * 3
CODE = (
    "```python\ndef parse(data: bytes) -> Header:\n    if not data:\n        raise Empty()\n```\n"
)
BODY = "".join(f"def f{i}(x):\n    return x * {i}  # a realistic body\n\n" for i in range(40))
QWEN = (
    "<tool_call>\n<function=FileWrite>\n<parameter=file_path>\nsrc/pkg/mod.py\n</parameter>\n"
    f"<parameter=content>\n{BODY}\n</parameter>\n</function>\n</tool_call>"
)
HERMES = (
    '<tool_call>\n{"name": "Grep", "arguments": {"pattern": "def parse", '
    '"case_insensitive": "true", "limit": "20"}}\n</tool_call>'
)
TURNS = {
    "prose only (fast path)": PROSE + PROSE,
    "prose + code block": PROSE + CODE + PROSE,
    "prose + Qwen3 XML FileWrite": PROSE + QWEN,
    "prose + Hermes Grep": PROSE + CODE + HERMES,
    "prose + cut-off FileWrite": PROSE + QWEN[: len(QWEN) // 2],
}


def deltas(text: str, size: int = 4) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def timed(fn: Callable[[], object], n: int = N) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter_ns()
        fn()
        out.append((time.perf_counter_ns() - t) / 1000)
    return out


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98]


def show(name: str, values: list[float], base: list[float]) -> None:
    med, bmed = statistics.median(values), statistics.median(base)
    print(
        f"  {name:34s} p50 {med:8.1f} µs  p99 {p99(values):8.1f} µs   "
        f"baseline p50 {bmed:7.1f} µs  ratio {med / bmed:6.1f}x"
    )


def chunk_frames(text: str) -> list[str]:
    return [
        json.dumps({"choices": [{"index": 0, "delta": {"content": d}, "finish_reason": None}]})
        for d in deltas(text)
    ]


def assemble(frames: list[str]) -> None:
    asm = TurnAssembler(TOOLS)
    reading = _Reading(TOOLS, prompted=False, recover=True, tagged=False)
    for f in frames:
        for event in asm.feed(json.loads(f)):
            reading.feed(event)
    for event in asm.finish():
        reading.feed(event)
    reading.finish()


def main() -> None:
    print(f"text tool-call recovery, {N} runs per turn (baseline: joining the turn's deltas)")
    worst = 0.0
    for name, text in TURNS.items():
        parts = deltas(text)
        rec = recover_tool_calls(text, TOOLS)
        label = f"{name} [{len(text)} B, {len(rec.calls)}+{len(rec.problems)}]"
        values = timed(lambda text=text: recover_tool_calls(text, TOOLS))
        base = timed(lambda parts=parts: "".join(parts))
        show(label, values, base)
        worst = max(worst, statistics.median(values))
    print(f"worst median: {worst:.1f} µs (target ≤ 100 µs): {'OK' if worst <= 100 else 'MISSED'}")
    print("\nwhole turn through TurnAssembler and the tool protocol (baseline: json.loads)")
    for name in ("prose only (fast path)", "prose + Qwen3 XML FileWrite"):
        frames = chunk_frames(TURNS[name])
        values = timed(lambda frames=frames: assemble(frames), 300)
        base = timed(lambda frames=frames: [json.loads(f) for f in frames], 300)
        show(f"{name} [{len(frames)} chunks]", values, base)
        extra = (statistics.median(values) - statistics.median(base)) / len(frames)
        print(f"  {'':34s} = {extra:.1f} µs per chunk on top of decoding it")


if __name__ == "__main__":
    main()
