"""Worked examples for the prompted protocol: short round trips built from the offered tools.

A small model that only reads a description of the call format rarely calls anything (0 of 5
prompts with the bundled 135M model); with worked examples in the conversation it does, but it
copies their arguments. So each example shows the values being taken *from the request* (the
path, command or word the user wrote is the one in the call), the result coming back in a
`<tool_response>`, and a plain answer that quotes the result. Each example uses a different tool,
and its names and values (a weather station, an invoice, a `wc` count) are unlike anything a
coding task would ask for, so copying them is visibly wrong. Only tools that are offered get an
example; one plain question answered without a tool shows that not every request needs a call.

Which examples, and in which order, depends on the request: each scene carries a few words of
the intent it shows ("run", "list", "contains", ...); the scenes whose words the user's request
shares most are chosen, the closest one last, right before the request. A 135M model follows the
nearest example far more than the description (measured: `bench/agent_eval.py`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from openmono.llm._calltext import call_text, result_text
from openmono.llm._messages import ChatMessage, ToolSpec

MAX_EXAMPLES = 4


@dataclass(frozen=True)
class Scene:
    """One round trip: the request, the call's arguments, the tool's result, the answer; `intent`
    holds words a request for this tool tends to use."""

    request: str
    arguments: dict[str, Any]
    result: str
    answer: str
    intent: str = ""


# In order of preference when the request says nothing about the tool it needs.
SCENES: dict[str, Scene] = {
    "FileRead": Scene(
        "What is the station id in weather/station.ini?",
        {"file_path": "weather/station.ini"},
        "     1\t[station]\n     2\tid = KX-4471\n     3\tunits = metric",
        "The station id in weather/station.ini is KX-4471.",
        "read what says show value line first content inside",
    ),
    "Bash": Scene(
        "Run `wc -l ledger.csv` and tell me the count.",
        {"command": "wc -l ledger.csv"},
        "212 ledger.csv\n[exit code 0]",
        "`wc -l ledger.csv` printed 212: the file has 212 lines.",
        "run command execute shell prints output count script",
    ),
    "FileWrite": Scene(
        "Create shopping/list.txt containing: oat milk",
        {"file_path": "shopping/list.txt", "content": "oat milk\n"},
        "Created shopping/list.txt (1 lines, 9 bytes)",
        "Created shopping/list.txt with the line: oat milk",
        "create write save new containing text put into",
    ),
    "Grep": Scene(
        "Which file mentions invoice_total?",
        {"pattern": "invoice_total"},
        "billing/report.rb:31:  invoice_total = lines.sum\n[1 matching line in 1 file]",
        "billing/report.rb mentions invoice_total, on line 31.",
        "which contains mentions search word where grep",
    ),
    "FileEdit": Scene(
        "In garden/beds.yaml, change tomato to basil.",
        {"file_path": "garden/beds.yaml", "old_string": "tomato", "new_string": "basil"},
        "Edited garden/beds.yaml: 1 replacement\n     4\tnorth: basil",
        "garden/beds.yaml now says basil instead of tomato.",
        "change replace edit update instead set",
    ),
    "ListDirectory": Scene(
        "What is in the photos folder?",
        {"path": "photos"},
        "photos/\nphotos/beach.jpg\nphotos/2019/",
        "The photos folder holds beach.jpg and a 2019 folder.",
        "list files folder directory contents",
    ),
    "Glob": Scene(
        "Find the files matching **/*.svg.",
        {"pattern": "**/*.svg"},
        "icons/moon.svg\nicons/sun.svg",
        "There are two: icons/moon.svg and icons/sun.svg.",
        "find files matching all pattern extension",
    ),
}

PLAIN = ("What is 9 times 7?", "9 times 7 is 63.")
_WORD = re.compile(r"[a-z]{3,}")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def chosen_scenes(
    tools: Sequence[ToolSpec],
    request: str | None,
    limit: int = MAX_EXAMPLES,
    last: str | None = None,
) -> list[tuple[str, Scene]]:
    """Up to `limit` offered scenes, the one closest to `request` last; `last` names a tool whose
    scene goes last whatever the words say (the tool already picked for the request)."""
    offered = {t.name for t in tools}
    scenes = [(n, s) for n, s in SCENES.items() if n in offered]
    if not request:
        chosen = scenes[:limit][::-1]
    else:
        asked = _words(request)
        scored = [
            (len(asked & _words(f"{s.intent} {s.request}")), -i, n, s)
            for i, (n, s) in enumerate(scenes)
        ]
        best = sorted(scored, reverse=True)[:limit]
        chosen = [(n, s) for _, _, n, s in reversed(best)]
    if last is not None and last in SCENES and last in offered:
        chosen = [(n, s) for n, s in chosen if n != last][-(limit - 1) :] if limit > 1 else []
        chosen.append((last, SCENES[last]))
    return chosen


def example_turns(
    tools: Sequence[ToolSpec], request: str | None = None, last: str | None = None
) -> list[ChatMessage]:
    """The example conversation for `tools` and the user's `request` (empty when no offered
    tool has a scene); `last`: see `chosen_scenes`."""
    chosen = chosen_scenes(tools, request, last=last)
    if not chosen:
        return []
    out: list[ChatMessage] = []
    for i, (name, scene) in enumerate(chosen):
        if i == 1:  # a plain question between the tool examples, not at an end
            out += [
                ChatMessage(role="user", content=PLAIN[0]),
                ChatMessage(role="assistant", content=PLAIN[1]),
            ]
        out += [
            ChatMessage(role="user", content=scene.request),
            ChatMessage(role="assistant", content=call_text(name, scene.arguments)),
            ChatMessage(
                role="user",
                content=result_text(name, scene.result),
            ),
            ChatMessage(role="assistant", content=scene.answer),
        ]
    return out
