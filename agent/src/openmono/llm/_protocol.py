"""Which tool protocol a model gets: its template's (`native`) or ours in the prompt (`prompted`).

A chat template that renders tools (`/props` → `chat_template_caps.supports_tools`) lets the server
show the model the `tools` array and parse its calls back into `tool_calls`: that is `native`.
A template without tool support makes llama-server drop the array silently (same prompt tokens
with or without it), so the model never sees a tool: then the tools are rendered into the system
prompt by us, with worked examples, and the calls are read back from the text (`prompted`,
`_prompted`). The setting `llm.tool_protocol` is `auto` (decide from the caps), `native` or
`prompted`. Where `/props` is missing (not llama.cpp) `auto` probes: two one-token requests, with
and without a tool, and compares their prompt tokens (equal: the template ignored the tool).

A template may also say which protocol its model calls tools best with, in a comment
(`openmono:tool_protocol=prompted`). Ours for SmolLM2 does: it renders tools, so a forced `native`
works, but the 135M model called no tool natively in the eval and did best prompted with the grammar
(docs/agent-eval.md). The comment travels in `/props` (`chat_template`), so `auto` on any agent box
behind the gateway follows it. Only `auto` reads it; a set protocol wins.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

ToolProtocol = Literal["native", "prompted"]
ProtocolSetting = Literal["auto", "native", "prompted"]
CapsSource = Literal["props", "probe", "unknown"]

NATIVE_BLIND = (
    "llm.tool_protocol is `native`, but the model's chat template does not render tools "
    "(chat_template_caps.supports_tools is false): the model cannot see them. Set "
    "`tool_protocol` to `auto` or `prompted`, or serve a template with tools "
    "(--chat-template-file)."
)


@dataclass(frozen=True)
class ToolSupport:
    """What the server said (or a probe showed) about the template's tool support."""

    supports_tools: bool | None
    source: CapsSource
    declared: ToolProtocol | None = None  # what the template's own comment asks for


_DECLARED = re.compile(r"openmono:tool_protocol=(native|prompted)\b")


def caps_from_props(props: Mapping[str, Any]) -> ToolSupport:
    """Tool support from llama-server's `/props`; `None` when it does not say."""
    template = props.get("chat_template")
    found = _DECLARED.search(template) if isinstance(template, str) else None
    declared: ToolProtocol | None = None
    if found:
        declared = "prompted" if found.group(1) == "prompted" else "native"
    caps = props.get("chat_template_caps")
    if isinstance(caps, Mapping) and isinstance(caps.get("supports_tools"), bool):
        return ToolSupport(bool(caps["supports_tools"]), "props", declared)
    return ToolSupport(None, "unknown", declared)


@dataclass(frozen=True)
class ProtocolChoice:
    """The protocol in use, why, and a warning to show once (or None)."""

    protocol: ToolProtocol
    reason: str
    warning: str | None = None


def choose_protocol(setting: ProtocolSetting, support: ToolSupport) -> ProtocolChoice:
    """Decide the protocol from the setting and what is known about the template."""
    said = {
        True: f"the chat template renders tools (from {support.source})",
        False: f"the chat template has no tool support (from {support.source})",
        None: "tool support unknown",
    }[support.supports_tools]
    if setting == "prompted":
        return ProtocolChoice("prompted", f"set to prompted; {said}")
    if setting == "native":
        warning = NATIVE_BLIND if support.supports_tools is False else None
        return ProtocolChoice("native", f"set to native; {said}", warning)
    if support.declared is not None:
        return ProtocolChoice(support.declared, f"auto: {said}; it asks for {support.declared}")
    if support.supports_tools is False:
        return ProtocolChoice("prompted", f"auto: {said}")
    # Unknown (no /props, no usable probe): trust the OpenAI convention that `tools` is honoured.
    return ProtocolChoice("native", f"auto: {said}")
