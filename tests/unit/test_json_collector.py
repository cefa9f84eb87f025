"""`--output-format json` lists the tools in the order the model called them."""

from __future__ import annotations

from typing import Literal

from openmono.cli.render import Collector
from openmono.loop import ToolFinished, ToolStarted

Problem = Literal["unknown_tool", "invalid"] | None


def _finished(call_id: str, name: str, *, ok: bool = True, problem: Problem = None) -> ToolFinished:
    return ToolFinished(call_id=call_id, name=name, ok=ok, output="", problem=problem)


def test_calls_run_together_keep_the_models_order() -> None:
    c = Collector()
    c(ToolStarted(call_id="a", name="WebSearch", arguments={}))
    c(ToolStarted(call_id="b", name="WebFetch", arguments={}))
    c(_finished("b", "WebFetch"))  # the fetch finished first
    c(_finished("a", "WebSearch", ok=False))
    assert [(t["name"], t["ok"]) for t in c.tools] == [("WebSearch", False), ("WebFetch", True)]
    assert c.calls == {"valid": 2, "invalid": 0, "unknown_tool": 0}


def test_a_refused_call_takes_its_place_and_reused_ids_stay_apart() -> None:
    c = Collector()
    c(_finished("call_0", "Nope", ok=False, problem="unknown_tool"))  # refused, never started
    c(ToolStarted(call_id="call_0", name="FileRead", arguments={}))  # next turn, same id
    c(_finished("call_0", "FileRead"))
    assert [(t["name"], t["problem"]) for t in c.tools] == [
        ("Nope", "unknown_tool"),
        ("FileRead", None),
    ]
    assert c.calls["unknown_tool"] == 1 and c.calls["valid"] == 1
