"""The full-screen UI under a fast stream, headless (Textual's Pilot), in-process paced model.

1. Stream lag: a reply of `--tokens` tokens (default 2,000) arrives at `--rate` tokens/s (1,000),
   as markdown (words, bold, code spans, a paragraph every 40 tokens). Lag = from the moment the
   model yielded its last token to the moment the transcript's Markdown widget holds the whole
   reply and the screen has processed its pending messages. The baseline, measured in the same
   run, is the same stream into a sink that drops events (the loop and the pacing alone).
   Target: ≤ 100 ms.
2. Keystroke-to-screen while a turn streams: a key pressed (Pilot) during a 1,000 tokens/s stream
   until the prompt holds the character and the screen has processed the key's messages; the
   baseline is the same keystroke with no turn running. Target: ≤ 50 ms.
Medians over `--runs` runs (and every keystroke of those runs).

    uv run python bench/tui.py [--tokens 2000] [--rate 1000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

from openmono.agent import open_agent
from openmono.cli.tui import OpenMonoApp
from openmono.config import RunOptions, load_settings
from openmono.llm import ChatMessage, Done, StreamEvent, TextDelta, ToolSpec, Usage
from openmono.loop import discard
from textual import events
from textual.widgets import Markdown

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the in-process model base lives with the test support

from tests.support.scripted_model import InProcessModel  # noqa: E402

SIZE = (120, 40)


def token(i: int) -> str:
    if i % 40 == 39:
        return f"end{i}.\n\n"
    if i % 13 == 0:
        return f"**bold{i}** "
    if i % 17 == 0:
        return f"`code{i}` "
    return f"word{i} "


class PacedModel(InProcessModel):
    """Yields `tokens` text deltas at `rate` per second; remembers when it yielded the last."""

    def __init__(self, tokens: int, rate: float) -> None:
        super().__init__("paced", 1_000_000)
        self.tokens, self.rate = tokens, rate
        self.last_yield = 0.0

    async def reply(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec] | None
    ) -> AsyncIterator[StreamEvent]:
        start = time.monotonic()
        for i in range(self.tokens):
            wait = start + i / self.rate - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self.last_yield = time.monotonic()
            yield TextDelta(text=token(i))
        yield Usage(prompt_tokens=10, completion_tokens=self.tokens)
        yield Done(finish_reason="stop")


class Painted:
    """Notes the first frame handed to the terminal once a condition holds (headless, a frame is
    composed as on a real terminal; only the final write is skipped)."""

    def __init__(self, app: OpenMonoApp) -> None:
        self.check: Callable[[], bool] | None = None
        self.at: asyncio.Future[float] | None = None
        original = app._display

        def display(screen: Any, renderable: Any) -> None:
            original(screen, renderable)
            at, check = self.at, self.check
            if renderable is None or at is None or check is None or at.done():
                return
            if check():
                at.set_result(time.monotonic())

        app._display = display  # type: ignore[method-assign]

    def expect(self, check: Callable[[], bool]) -> asyncio.Future[float]:
        self.check = check
        self.at = asyncio.get_running_loop().create_future()
        return self.at


def full_text(tokens: int) -> str:
    return "".join(token(i) for i in range(tokens)).strip()


async def tui_lag(ws: Path, tokens: int, rate: float) -> float:
    model = PacedModel(tokens, rate)
    app = OpenMonoApp(RunOptions(workspace=ws), model=model)
    async with app.run_test(size=SIZE) as pilot:
        painted = Painted(app)
        await app.ready.wait()
        app.prompt.load_text("write")
        await pilot.press("enter")

        def complete() -> bool:
            # The last fragment appended and the append finished (its blocks are mounted).
            streamers = app.transcript.streamers
            if not streamers or not streamers[-1].text.endswith(token(tokens - 1)):
                return False
            last = streamers[-1]
            return not last.pending and (last.task is None or last.task.done())

        shown = await painted.expect(complete)
        text = "".join(w.source for w in app.transcript.query(Markdown))
        assert text.strip() == full_text(tokens)
    return (shown - model.last_yield) * 1000


async def null_lag(ws: Path, data: Path, tokens: int, rate: float) -> float:
    model = PacedModel(tokens, rate)
    settings = load_settings(ws, overrides={"data_dir": str(data)})
    agent = await open_agent(settings, ws, model=model, probe=False)
    try:
        await agent.run_turn("write", discard)
        return (time.monotonic() - model.last_yield) * 1000
    finally:
        await agent.aclose()


async def keystrokes(ws: Path, rate: float, streaming: bool, presses: int = 20) -> list[float]:
    model = PacedModel(int(rate * 15), rate)
    app = OpenMonoApp(RunOptions(workspace=ws), model=model)
    out: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        painted = Painted(app)
        driver = app._driver
        assert driver is not None
        await app.ready.wait()
        if streaming:
            app.prompt.load_text("write")
            await pilot.press("enter")
            for _ in range(10_000):  # the reply's first words are on the widget
                if app.transcript.query(Markdown):
                    break
                await asyncio.sleep(0.005)
        for _ in range(presses):
            before = len(app.prompt.text)
            frame = painted.expect(lambda n=before: len(app.prompt.text) > n)  # type: ignore[misc]
            t0 = time.monotonic()
            # As a terminal's input thread does; Pilot.press would wait for an idle CPU.
            key = events.Key("x", "x")
            key.set_sender(app)
            driver.send_message(key)
            shown = await frame
            out.append((shown - t0) * 1000)
            await asyncio.sleep(0.05)
        if streaming:
            assert app.busy, "the stream ended before the keystrokes did: raise its length"
        app.action_interrupt()
    return out


def med(values: list[float]) -> float:
    return statistics.median(values)


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-tui-"))
    ws, data = root / "ws", root / "data"
    ws.mkdir()
    os.environ["OPENMONO_DATA_DIR"] = str(data)
    await tui_lag(ws, 200, args.rate)  # warm-up: imports, CSS, first paint
    base = [await null_lag(ws, data, args.tokens, args.rate) for _ in range(args.runs)]
    lags = [await tui_lag(ws, args.tokens, args.rate) for _ in range(args.runs)]
    idle: list[float] = []
    busy: list[float] = []
    for _ in range(max(1, args.runs // 2)):
        idle += await keystrokes(ws, args.rate, streaming=False)
        busy += await keystrokes(ws, args.rate, streaming=True)
    print(f"stream of {args.tokens} tokens at {args.rate:.0f} tok/s, {args.runs} runs")
    print(f"  end lag, no UI (baseline)      median {med(base):7.1f} ms")
    print(f"  end lag, full-screen UI        median {med(lags):7.1f} ms  (target <= 100 ms)")
    print(f"  UI minus baseline              median {med(lags) - med(base):7.1f} ms")
    print(f"keystroke to screen, {len(busy)} keys")
    print(f"  idle (baseline)                median {med(idle):7.1f} ms")
    print(f"  while a turn streams           median {med(busy):7.1f} ms  (target <= 50 ms)")
    print(f"  ratio streaming / idle         {med(busy) / max(med(idle), 1e-6):7.2f}x")
    ok = med(lags) <= 100 and med(busy) <= 50
    print("OK" if ok else "ABOVE TARGET")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
