"""`openmono -p "task"`: one turn, no questions asked, an exit code that says how it went.

Exit codes: 0 the model finished its answer; 1 the turn stopped for another reason (LLM error,
iteration cap, doom loop, ...); 2 bad configuration, or a command only the interactive session has
(`/map`, `/compact`, ...: as a task it would reach the model as text); 130 interrupted (Ctrl-C,
SIGTERM). Permission asks are never waited on: they are denied with a message the model reads (see
`--allow`, `--yolo`).
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path
from typing import Any

from openmono.agent import Agent, load_instructions, open_agent
from openmono.cli.render import Collector, JsonLinesRenderer, PlainRenderer
from openmono.cli.slash import COMMANDS
from openmono.config import RunOptions, Settings
from openmono.instructions import slash_target
from openmono.llm import model_label
from openmono.loop import EventSink, LoopEvent, Notice, TurnDone

EXIT_OK, EXIT_FAILED, EXIT_CONFIG, EXIT_INTERRUPTED = 0, 1, 2, 130


def _sink(fmt: str, collector: Collector, lines: JsonLinesRenderer | None) -> EventSink:
    """Where a run's events go; notices reach stderr whatever the format (with `json` they would
    otherwise be lost, and a script reading `stream-json` may not show them)."""
    plain = PlainRenderer()

    def sink(event: LoopEvent) -> None:
        collector(event)
        if fmt == "text":
            plain(event)
            return
        if lines is not None:
            lines(event)
        if isinstance(event, Notice):
            plain(event)

    return sink


def interactive_only(settings: Settings, workspace: Path, prompt: str) -> str | None:
    """Why `prompt` cannot be a one-shot task: it names a built-in command of the interactive
    session that no skill or custom command of the workspace answers here."""
    stripped = prompt.strip()
    if not stripped.startswith("/"):
        return None
    name = stripped[1:].partition(" ")[0]
    if name not in COMMANDS or slash_target(load_instructions(settings, workspace), name):
        return None
    return (
        f"/{name} is a command of the interactive session: run `openmono` and type it there. "
        "-p takes a task, /rules, /skills, or a skill or custom command of the workspace."
    )


async def run_oneshot(opts: RunOptions, prompt: str) -> int:
    """Run `prompt` as one turn; returns the process exit code."""
    settings = opts.settings()
    workspace = opts.workspace_dir(settings)
    refused = interactive_only(settings, workspace, prompt)
    if refused is not None:
        print(f"openmono: {refused}", file=sys.stderr)
        return EXIT_CONFIG
    agent = await open_agent(
        settings, workspace, resume=opts.resume, mode=opts.mode, allow=opts.allow, yolo=opts.yolo
    )
    collector = Collector()
    lines = JsonLinesRenderer() if opts.output_format == "stream-json" else None
    sink = _sink(opts.output_format, collector, lines)
    if lines is not None:
        model_id = agent.info.model if agent.info else settings.llm.model
        lines.emit_raw(
            {
                "kind": "session",
                "session_id": agent.session_id,
                "model": model_label(model_id) if model_id else None,
                "model_id": model_id,
                "n_ctx": agent.loop.options.n_ctx,
                "tool_protocol": agent.tool_protocol,
                "workspace": str(workspace),
            }
        )
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(agent.run_turn(prompt, sink))
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, task.cancel)
    try:
        done = await task
    except asyncio.CancelledError:
        print(f"\ninterrupted; session {agent.session_id} keeps what was said", file=sys.stderr)
        if opts.output_format == "json":
            partial = agent.loop.last_reply.text if agent.loop.last_reply else ""
            done = TurnDone(reason="cancelled", text=partial, error="interrupted")
            print(json.dumps(_result(done, agent, collector), ensure_ascii=False))
        return EXIT_INTERRUPTED
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await agent.aclose()
    if opts.output_format == "json":
        print(json.dumps(_result(done, agent, collector), ensure_ascii=False))
    return EXIT_OK if done.reason == "stop" else EXIT_FAILED


def _result(done: TurnDone, agent: Agent, collector: Collector) -> dict[str, Any]:
    return {
        "session_id": agent.session_id,
        "tool_protocol": agent.tool_protocol,
        "ok": done.reason == "stop",
        "reason": done.reason,
        "result": done.text,
        "error": done.error,
        "iterations": done.iterations,
        "usage": {
            "prompt_tokens": collector.prompt_tokens,
            "completion_tokens": collector.completion_tokens,
        },
        "tools": collector.tools,
        "calls": collector.calls,
    }
