"""`/export`: a conversation as markdown, JSON or a self-contained HTML page."""

from __future__ import annotations

import html
import json

from openmono.llm import ChatMessage

FORMATS = ("md", "json", "html")


def _markdown(session_id: str, messages: list[ChatMessage]) -> str:
    out = [f"# OpenMono session {session_id}", ""]
    for m in messages:
        if m.role == "tool":
            out += [
                f"**tool result** `{m.tool_call_id}`",
                "",
                "```",
                (m.content or "").rstrip(),
                "```",
                "",
            ]
            continue
        out += [f"## {m.role}", ""]
        if m.content:
            out += [m.content.rstrip(), ""]
        for call in m.tool_calls:
            out += [f"**{call.name}** `{call.id}`", "", "```json", call.arguments, "```", ""]
    return "\n".join(out)


def _html(session_id: str, messages: list[ChatMessage]) -> str:
    rows = []
    for m in messages:
        body = html.escape(m.content or "")
        calls = "".join(
            f"<pre class=call><b>{html.escape(c.name)}</b> {html.escape(c.arguments)}</pre>"
            for c in m.tool_calls
        )
        rows.append(f"<section class={m.role}><h2>{m.role}</h2><pre>{body}</pre>{calls}</section>")
    style = (
        "body{font-family:sans-serif;max-width:60em;margin:auto}pre{white-space:pre-wrap}"
        ".user{background:#eef}.tool{background:#f4f4f4;font-size:90%}"
    )
    return (
        f"<!doctype html><html><head><meta charset=utf-8><title>OpenMono {session_id}</title>"
        f"<style>{style}</style></head><body><h1>OpenMono session {session_id}</h1>"
        + "".join(rows)
        + "</body></html>\n"
    )


def export_text(kind: str, session_id: str, system: str, messages: list[ChatMessage]) -> str:
    if kind == "json":
        data = {
            "session_id": session_id,
            "system": system,
            "messages": [m.model_dump(mode="json", exclude_none=True) for m in messages],
        }
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    if kind == "html":
        return _html(session_id, messages)
    return _markdown(session_id, messages)
