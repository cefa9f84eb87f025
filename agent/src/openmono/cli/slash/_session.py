"""Session commands: /help /status /stats /clear /resume /retry /undo /mode /plan /debug /exit."""

from __future__ import annotations

import time
from pathlib import Path

from rich.markup import escape

from openmono.agent import Agent
from openmono.cli.slash._table import COMMANDS, Surface, register
from openmono.permissions import MODES
from openmono.sessions import SessionError, SessionStore


def tools_line(agent: Agent) -> str:
    """The tool protocol in use and why (`prompted`: the tools are in the system prompt)."""
    protocol, reason = agent.tool_protocol, agent.protocol_reason
    return f"{protocol} ({reason})" if reason else protocol


async def help_(s: Surface, _arg: str) -> None:
    s.table([(c.usage, c.description) for c in COMMANDS])
    own = COMMANDS.session_commands(s)
    if own:
        s.print("[bold]this workspace's skills and commands[/bold]")
        s.table([(c.usage, c.description) for c in own])
    if s.keys:
        s.print("[bold]keys[/bold]")
        s.table(s.keys)


async def status(s: Surface, _arg: str) -> None:
    agent = s.current
    loop = agent.loop
    used, n_ctx = loop.context_tokens(), loop.options.n_ctx
    rows = [
        ("session", agent.session_id),
        ("model", agent.info.label if agent.info else "(no probe)"),
        ("endpoint", s.settings.llm.endpoint),
        ("tools", tools_line(agent)),
        ("context", f"~{used} of {n_ctx} tokens ({100 * used // max(n_ctx, 1)} %)"),
        ("messages", str(len(loop.conv.messages))),
        ("mode", loop.mode),
        ("thinking", "on" if s.thinking.thinking else "off"),
        ("workspace", str(agent.workspace)),
        ("session file", str(agent.writer.path)),
    ]
    if todos := agent.todos:
        rows.append(("todos", "; ".join(f"[{t.status}] {t.content}" for t in todos)))
    s.table(rows)


async def stats(s: Surface, _arg: str) -> None:
    st = s.stats
    elapsed = time.monotonic() - st.started
    tools = ", ".join(f"{name} ×{n}" for name, n in sorted(st.tools.items(), key=lambda x: -x[1]))
    rows = [
        ("time", f"{elapsed:.0f} s in this session window"),
        ("turns", str(st.turns)),
        ("model replies", str(st.model_replies)),
        ("prompt tokens", str(st.prompt_tokens)),
        ("completion tokens", str(st.completion_tokens)),
        ("last speed", f"{st.last_tokens_per_s:.1f} tok/s" if st.last_tokens_per_s else "-"),
        ("tool calls", f"{st.tool_calls} ({st.tool_failures} failed)"),
    ]
    if tools:
        rows.append(("by tool", tools))
    s.table(rows)


async def clear(s: Surface, _arg: str) -> None:
    await s.open(None)
    s.print(f"[dim]new session {s.current.session_id}[/dim]")


async def resume(s: Surface, arg: str) -> None:
    if not arg:
        rows = SessionStore(s.settings.data_dir).list_sessions()[:10]
        if not rows:
            s.print("[dim]no sessions yet[/dim]")
            return
        s.table([(r.session_id, r.updated_at, r.title or "") for r in rows])
        return
    try:
        agent = await s.open(arg)
    except SessionError as exc:
        s.print(f"[red]{escape(str(exc))}[/red]")
        return
    s.print(f"[dim]resumed {agent.session_id}: {len(agent.loop.conv.messages)} messages[/dim]")


async def retry(s: Surface, _arg: str) -> None:
    prompt = s.current.loop.take_back_last_turn()
    if prompt is None:
        s.print("[dim]nothing to retry[/dim]")
        return
    await s.turn(prompt)


async def undo(s: Surface, arg: str) -> None:
    if arg and not (arg.isdigit() and int(arg) > 0):
        s.print("[red]usage: /undo [N] (N turns' file changes, default 1)[/red]")
        return
    restored: list[Path] = []
    steps = 0
    for _ in range(int(arg or 1)):
        paths = s.current.undo()
        if not paths:
            break
        steps += 1
        restored += paths
    if not restored:
        s.print("[dim]nothing to undo[/dim]")
        return
    for path in dict.fromkeys(restored):
        shown = path.relative_to(s.workspace) if path.is_relative_to(s.workspace) else path
        s.print(f"  restored {escape(str(shown))}")
    s.print(f"[dim]undid {steps} turn{'s' if steps != 1 else ''} of file changes[/dim]")


async def mode(s: Surface, arg: str) -> None:
    if arg:
        if arg not in MODES:
            s.print(f"[red]modes: {', '.join(MODES)}[/red]")
            return
        s.current.loop.set_mode(arg)
    s.print(f"mode: {s.current.loop.mode}")


async def plan(s: Surface, arg: str) -> None:
    s.current.loop.set_mode("plan")
    s.print("mode: plan (read-only; the model plans, ExitPlanMode asks you to approve)")
    if arg:
        await s.turn(arg)


async def debug(s: Surface, arg: str) -> None:
    s.debug = {"on": True, "off": False}.get(arg, not s.debug)
    s.wire_model()
    s.print(f"debug: {'on' if s.debug else 'off'} (requests, stream events, token counts)")


async def thinking(s: Surface, _arg: str) -> None:
    text = s.last_reasoning
    s.print(f"[dim]{escape(text)}[/dim]" if text else "[dim]no thinking yet[/dim]")


async def exit_(s: Surface, _arg: str) -> None:
    s.running = False


register("help", "this list", help_, aliases=("?",))
register("status", "session, model, context use, mode", status)
register("stats", "tokens, time and tool calls of this session", stats)
register("clear", "start a new session", clear)
register("resume", "list recent sessions; /resume ID continues one", resume, arg_hint="[ID]")
register("retry", "run the last message again", retry)
register("undo", "restore the files the last N turns changed", undo, arg_hint="[N]")
register("mode", "show or set the mode: agent, plan, ask", mode, arg_hint="[MODE]")
register("plan", "enter plan mode; plan TASK right away if given", plan, arg_hint="[TASK]")
register(
    "debug", "toggle verbose output: requests, stream events, tokens", debug, arg_hint="[on|off]"
)
register("thinking", "show the last reply's thinking", thinking)
register("exit", "leave (or Ctrl-D)", exit_, aliases=("quit", "q"))
