"""The markup of tool calls written as text is held back from the visible answer."""

from __future__ import annotations

from openmono.loop._holdback import CallHoldback


def _run(chunks: list[str], recovered: str | None) -> tuple[list[str], str]:
    hb = CallHoldback()
    shown = [hb.feed(c) for c in chunks]
    return shown, hb.finish(recovered)


def test_prose_is_shown_as_it_comes() -> None:
    shown, rest = _run(["Hello ", "world", ", a < b and c > d."], None)
    assert shown == ["Hello ", "world", ", a < b and c > d."]
    assert rest == ""


def test_the_call_markup_is_never_shown() -> None:
    chunks = [
        "I will read it.\n<tool",
        '_call>\n{"name": "FileRead", ',
        '"arguments": {}}',
        "\n</tool_call>",
    ]
    shown, rest = _run(chunks, "I will read it.")
    assert "".join(shown) == "I will read it.\n"
    assert shown[1:] == ["", "", ""]
    assert rest == ""


def test_text_after_the_call_is_shown_at_the_end() -> None:
    call = "<function=FileRead><parameter=file_path>a.py</parameter></function>"
    text = f"Reading.\n{call}\nThen done."
    shown, rest = _run([text[:12], text[12:40], text[40:]], "Reading.\n\nThen done.")
    assert "".join(shown) + rest == "Reading.\n\nThen done."


def test_a_tail_that_only_looked_like_a_marker_is_released_by_the_next_chunk() -> None:
    shown, rest = _run(["x <tool", "box> y"], None)
    assert shown == ["x ", "<toolbox> y"]
    assert rest == ""


def test_without_a_recovery_what_was_held_is_shown_as_written() -> None:
    # a marker that recovered no call (the stream broke off, or it was inside <think>)
    shown, rest = _run(["see <tool_call> here"], None)
    assert shown == ["see "]
    assert rest == "<tool_call> here"


def test_a_recovery_that_changed_shown_text_shows_the_held_text() -> None:
    shown, rest = _run(["abc <tool_call>{}</tool_call>"], "xyz")
    assert shown == ["abc "]
    assert rest == "<tool_call>{}</tool_call>"
