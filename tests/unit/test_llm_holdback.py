"""The markup of tool calls written as text is held back from the visible answer."""

from __future__ import annotations

from collections.abc import Sequence

from openmono.llm._tools import CallHoldback


def _run(chunks: list[str], calls: Sequence[str] = ()) -> tuple[list[str], str]:
    """What each chunk showed, and the rest at the end with the `calls` (their raw text, each
    found once in the whole text) taken out."""
    hb = CallHoldback()
    shown = [hb.feed(c) for c in chunks]
    text = "".join(chunks)
    spans = [(text.index(raw), text.index(raw) + len(raw)) for raw in calls]
    return shown, hb.finish(text, spans)


def test_prose_is_shown_as_it_comes() -> None:
    shown, rest = _run(["Hello ", "world", ", a < b and c > d."])
    assert shown == ["Hello ", "world", ", a < b and c > d."]
    assert rest == ""


def test_the_call_markup_is_never_shown() -> None:
    chunks = [
        "I will read it.\n<tool",
        '_call>\n{"name": "FileRead", ',
        '"arguments": {}}',
        "\n</tool_call>",
    ]
    call = '<tool_call>\n{"name": "FileRead", "arguments": {}}\n</tool_call>'
    shown, rest = _run(chunks, [call])
    assert "".join(shown) == "I will read it.\n"
    assert shown[1:] == ["", "", ""]
    assert rest == ""


def test_text_after_the_call_is_shown_at_the_end() -> None:
    call = "<function=FileRead><parameter=file_path>a.py</parameter></function>"
    text = f"Reading.\n{call}\nThen done.\n"
    shown, rest = _run([text[:12], text[12:40], text[40:]], [call])
    assert "".join(shown) + rest == "Reading.\n\nThen done."


def test_a_reply_that_starts_with_blank_lines_still_hides_its_call() -> None:
    call = '<tool_call>{"name": "FileRead", "arguments": {}}</tool_call>'
    shown, rest = _run(["\n\n<tool_", "call>", call.removeprefix("<tool_call>")], [call])
    assert "".join(shown) == "\n\n" and rest == ""


def test_a_tail_that_only_looked_like_a_marker_is_released_by_the_next_chunk() -> None:
    shown, rest = _run(["x <tool", "box> y"])
    assert shown == ["x ", "<toolbox> y"]
    assert rest == ""


def test_without_a_call_what_was_held_is_shown_as_written() -> None:
    # a marker that recovered no call (the stream broke off, or it was inside <think>)
    shown, rest = _run(["see <tool_call> here"])
    assert shown == ["see "]
    assert rest == "<tool_call> here"


def test_a_call_that_was_already_shown_shows_the_rest_as_written() -> None:
    fenced = '```json\n{"name": "FileRead", "arguments": {}}\n```'
    tagged = '<tool_call>{"name": "FileRead", "arguments": {}}</tool_call>'
    shown, rest = _run([f"{fenced} then {tagged}"], [fenced, tagged])
    assert shown == [f"{fenced} then "]  # a fence is not held (code blocks are common)
    assert rest == tagged
