"""Does the template render tools? Asked of a server that has no `/props` to say so.

Two one-token completions of the same tiny conversation, one with a tool in `tools` and one
without. A template that renders tools makes the first prompt longer; one that ignores them gives
both the same prompt tokens (what llama-server does with a template without tool support). A
server that refuses `tools` outright (HTTP 400) has no tool support either. Anything else (no usage
figures, errors) leaves it unknown.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from openmono.llm._protocol import ToolSupport

Post = Callable[[dict[str, Any]], Awaitable[tuple[int, dict[str, Any] | None]]]

_TOOL = {
    "type": "function",
    "function": {
        "name": "lookup_weather_station",
        "description": "Look up a weather station by its identifier.",
        "parameters": {
            "type": "object",
            "properties": {"station_id": {"type": "string"}},
            "required": ["station_id"],
        },
    },
}


def _prompt_tokens(data: dict[str, Any] | None) -> int | None:
    usage = (data or {}).get("usage")
    if not isinstance(usage, dict):
        return None
    n = usage.get("prompt_tokens")
    return n if isinstance(n, int) and n > 0 else None


async def probe_tool_support(post: Post, model: str | None) -> ToolSupport:
    """Compare the prompt tokens of a request with and without a tool (see the docstring)."""
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 1,
        "stream": False,
    }
    if model:
        body["model"] = model
    status, plain = await post(body)
    without = _prompt_tokens(plain) if status == 200 else None
    if without is None:
        return ToolSupport(None, "unknown")
    status, tooled = await post({**body, "tools": [_TOOL]})
    if status == 400:
        return ToolSupport(False, "probe")
    with_tools = _prompt_tokens(tooled) if status == 200 else None
    if with_tools is None:
        return ToolSupport(None, "unknown")
    return ToolSupport(with_tools > without, "probe")
