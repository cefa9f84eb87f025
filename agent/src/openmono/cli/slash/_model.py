"""Model commands: /model [NAME], /think [on|off|low|medium|high], /btw QUESTION."""

from __future__ import annotations

from contextlib import aclosing

from rich.markup import escape

from openmono.agent import open_model, probe_model
from openmono.cli.slash._table import Surface, register
from openmono.llm import ChatMessage, LLMError, ReasoningDelta, TextDelta
from openmono.loop import ReasoningChunk, TextChunk, TurnDone

EFFORTS = ("low", "medium", "high")
BTW_SYSTEM = (
    "The user asks a quick side question about the conversation so far. Answer it briefly from "
    "what you already know; you cannot use tools now. This aside is not part of the task."
)


async def model(s: Surface, arg: str) -> None:
    agent = s.current
    if arg:
        s.settings = s.settings.model_copy(
            update={"llm": s.settings.llm.model_copy(update={"model": arg})}
        )
        await agent.switch_model(open_model(s.settings))
        s.wire_model()
    base = s.base_model()
    info = await probe_model(base)
    if info is None:
        s.print("[red]the model did not answer /props or /v1/models[/red]")
        return
    if info.n_ctx:
        agent.loop.options.n_ctx = info.n_ctx
    requested = s.settings.llm.model
    shown = (
        f"model {escape(info.label)} · n_ctx {info.n_ctx} (from /{info.source}) · "
        f"tools {agent.tool_protocol}"
    )
    if requested and requested != info.model:
        shown += f" · requesting {escape(requested)}"
    s.print(shown)
    client = s.client()
    if client is not None:
        try:
            served = await client.list_models()
        except LLMError as exc:
            s.print(f"[dim]/v1/models: {escape(str(exc))}[/dim]")
            return
        if served:
            s.print("served: " + ", ".join(escape(m) for m in served) + " (/model NAME switches)")


async def think(s: Surface, arg: str) -> None:
    options = s.thinking
    if arg in EFFORTS:
        options.thinking, options.reasoning_effort = True, arg
    elif arg in ("on", "off"):
        options.thinking = arg == "on"
    elif not arg:
        options.thinking = not options.thinking
    else:
        s.print("[red]usage: /think [on|off|low|medium|high][/red]")
        return
    s.wire_model()
    effort = f", effort {options.reasoning_effort}" if options.reasoning_effort else ""
    s.print(
        f"thinking: {'on' if options.thinking else 'off'}{effort if options.thinking else ''} "
        "[dim](enable_thinking / reasoning_effort in each request; templates without it "
        "ignore it)[/dim]"
    )


async def btw(s: Surface, arg: str) -> None:
    """An aside: the conversation so far plus the question, no tools, nothing recorded."""
    if not arg:
        s.print("[red]usage: /btw QUESTION[/red]")
        return
    loop = s.current.loop
    messages = [
        ChatMessage(role="system", content=f"{loop.conv.system}\n\n{BTW_SYSTEM}"),
        *loop.conv.messages,
        ChatMessage(role="user", content=arg),
    ]
    sink = s.sink
    text = ""
    try:
        stream = loop.model.stream(messages, None, max_tokens=loop.options.max_tokens)
        async with aclosing(stream) as events:  # type: ignore[type-var]
            async for event in events:
                if isinstance(event, TextDelta):
                    text += event.text
                    sink(TextChunk(text=event.text))
                elif isinstance(event, ReasoningDelta):
                    sink(ReasoningChunk(text=event.text))
    except LLMError as exc:
        sink(TurnDone(reason="error", text=text, error=str(exc)))
        return
    sink(TurnDone(reason="stop", text=text))


register(
    "model", "show the model and the ones served; /model NAME switches", model, arg_hint="[NAME]"
)
register("think", "toggle the model's thinking (off by default)", think, arg_hint="[on|off|EFFORT]")
register("btw", "ask an aside: no tools, not kept in the conversation", btw, arg_hint="QUESTION")
