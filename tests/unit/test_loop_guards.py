"""Doom-loop guard, streaming repetition detector, and the context cutoffs."""

from __future__ import annotations

import json

from openmono.llm import ChatMessage, ToolCall
from openmono.loop import Conversation, DoomLoopGuard, RepetitionDetector, call_signature
from openmono.loop._context import compact, safe_cutoff


def sig(name: str, **args: object) -> str:
    return call_signature(name, json.dumps(args))


def test_same_call_three_times_trips() -> None:
    g = DoomLoopGuard()
    assert g.check(sig("FileRead", file_path="a")) is None
    assert g.check(call_signature("FileRead", '{ "file_path" :  "a" }')) is None
    verdict = g.check(sig("FileRead", file_path="a"))
    assert verdict and verdict.tier == "warn" and "same call 3 times" in verdict.message


def test_different_arguments_do_not_trip() -> None:
    g = DoomLoopGuard()
    assert all(g.check(sig("FileRead", file_path=f"f{i}")) is None for i in range(20))


def test_cycles_of_period_two_to_four_trip() -> None:
    for period in (2, 3, 4):
        g = DoomLoopGuard()
        unit = [sig("Grep", pattern=f"p{i}") for i in range(period)]
        results = [g.check(s) for s in unit * 3]
        assert all(r is None for r in results[:-1]), period
        last = results[-1]
        assert last and f"cycle of {period} calls" in last.message


def test_a_repeated_call_right_after_a_trip_trips_again() -> None:
    g = DoomLoopGuard()
    for _ in range(3):
        g.check(sig("Bash", command="ls"))
    assert g.trips == 1
    assert g.check(sig("Bash", command="ls")) is not None
    assert g.trips == 2


def test_the_guard_warns_then_blocks_then_stops() -> None:
    g = DoomLoopGuard()
    verdicts = [g.check(sig("Bash", command="ls")) for _ in range(5)]
    assert verdicts[:2] == [None, None]
    assert [v.tier for v in verdicts[2:] if v] == ["warn", "block", "stop"]
    assert "next repeat will not be run" in verdicts[2].message  # type: ignore[union-attr]
    assert g.stopped


def feed(detector: RepetitionDetector, text: str, chunk: int = 7) -> bool:
    return any(detector.feed(text[i : i + chunk]) for i in range(0, len(text), chunk))


def test_repetition_detector_catches_degenerate_text() -> None:
    assert feed(RepetitionDetector(), "Sure. " + "the " * 200)
    assert feed(RepetitionDetector(), "Intro\n" + "I will now read the file.\n" * 40)
    assert feed(RepetitionDetector(), "ok" + "!" * 600)


def test_repetition_detector_leaves_normal_text_alone() -> None:
    prose = " ".join(f"Sentence number {i} talks about item {i * 7 % 13}." for i in range(200))
    code = "\n".join(f"    value_{i} = compute({i}, {i * i})" for i in range(200))
    table = "\n".join(f"| {i} | {i * 3} | row {i} |" for i in range(100))
    for text in (prose, code, table, " " * 1000):
        assert not feed(RepetitionDetector(), text), text[:40]


def _tool_turn(i: int, size: int) -> list[ChatMessage]:
    return [
        ChatMessage(role="user", content=f"request {i}"),
        ChatMessage(
            role="assistant",
            content="",
            tool_calls=[ToolCall(id=f"a{i}", name="FileRead"), ToolCall(id=f"b{i}", name="Grep")],
        ),
        ChatMessage(role="tool", content="x" * size, tool_call_id=f"a{i}"),
        ChatMessage(role="tool", content="y" * size, tool_call_id=f"b{i}"),
        ChatMessage(role="assistant", content=f"answer {i}"),
    ]


def _no_orphans(messages: list[ChatMessage]) -> None:
    assert messages[0].role != "tool"
    called = {c.id for m in messages for c in m.tool_calls}
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    assert answered <= called
    assert called <= answered


def test_safe_cutoff_never_splits_a_tool_exchange() -> None:
    msgs = _tool_turn(0, 10)
    assert safe_cutoff(msgs, 3) == 1
    assert safe_cutoff(msgs, 2) == 1
    assert safe_cutoff(msgs, 4) == 4
    assert safe_cutoff(msgs, 99) == len(msgs)


def test_compaction_keeps_last_four_turns_and_evicts_big_outputs() -> None:
    conv = Conversation(system="s")
    for i in range(8):
        conv.messages += _tool_turn(i, 5000)
    note = compact(conv, n_ctx=200_000, overhead=100)
    assert note and "dropped 20 older messages" in note and "evicted" in note
    contents = [m.content or "" for m in conv.messages]
    assert contents[0].startswith("[Earlier conversation compacted")
    assert "request 3" in contents[0]  # the digest names earlier requests
    assert [c for c in contents if c.startswith("request")] == [f"request {i}" for i in range(4, 8)]
    big = [m for m in conv.messages[:-2] if m.role == "tool"]
    assert big and all(len(m.content or "") < 1500 for m in big)
    _no_orphans(conv.messages[1:])


def test_forced_compaction_of_one_long_turn_keeps_the_request() -> None:
    conv = Conversation(system="s")
    conv.messages.append(ChatMessage(role="user", content="fix the bug in parser.py"))
    for i in range(30):
        conv.messages += _tool_turn(i, 3000)[1:4]
    compact(conv, n_ctx=4096, overhead=200, force=True)
    first = conv.messages[0].content or ""
    assert "[The user's current request, verbatim]\nfix the bug in parser.py" in first
    _no_orphans(conv.messages[1:])
    assert len(conv.messages) < 30
