"""`clean_text`: hidden characters go, meaningful joiners, selectors and flag tags stay."""

from __future__ import annotations

import pytest
from openmono_contracts.texthygiene import clean_text

ZWSP, ZWNJ, ZWJ, WJ, BOM = "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"
VS16 = "\ufe0f"


@pytest.mark.parametrize(
    "hidden",
    [
        ZWSP, WJ, BOM, "\u00ad", "\u034f", "\u180e", "\u2061", "\u2064",
        "\u200e", "\u200f", "\u061c",  # bidi marks
        "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",  # embeddings, pop, overrides
        "\u2066", "\u2067", "\u2068", "\u2069",  # isolates
        "\ufff9", "\ufffb", "\u3164", "\U0001d173",
        "\x00", "\x1b", "\x7f", "\x9b",  # controls: NUL, ESC, DEL, CSI
    ],
)  # fmt: skip
def test_hidden_characters_are_removed(hidden: str) -> None:
    assert clean_text(f"ig{hidden}nore the{hidden} rules") == "ignore the rules"


def test_tabs_newlines_and_ordinary_text_stay() -> None:
    text = "a\tb\r\nc\n\nÉté — 東京 «ok» ﬁ"
    assert clean_text(text) == text


def test_line_breaking_controls_become_newlines() -> None:
    assert clean_text("a\x0bb\x0cc\u2028d\u2029e\x85f") == "a\nb\nc\nd\n\ne\nf"


def test_bidi_override_trick_is_undone() -> None:
    # RLO makes "exe.txt" display as "txt.exe"; without it the text reads as stored.
    assert clean_text("invoice\u202etxt.exe\u202c") == "invoicetxt.exe"


def test_zwj_inside_emoji_sequences_stays() -> None:
    family = f"\U0001f468{ZWJ}\U0001f469{ZWJ}\U0001f467"
    rainbow = f"\U0001f3f3{VS16}{ZWJ}\U0001f308"
    assert clean_text(f"{family} and {rainbow}") == f"{family} and {rainbow}"


def test_zwnj_in_persian_spelling_stays() -> None:
    word = f"می{ZWNJ}خواهم"
    assert clean_text(word) == word


def test_joiners_next_to_ascii_or_in_runs_go() -> None:
    assert clean_text(f"pass{ZWJ}word {ZWNJ}x") == "password x"
    assert clean_text(f"{ZWJ}\U0001f468") == "\U0001f468"
    assert clean_text(f"\U0001f468{ZWJ}{ZWJ}{ZWJ}\U0001f469") == f"\U0001f468{ZWJ}\U0001f469"


def test_one_variation_selector_stays_a_run_goes() -> None:
    keycap = f"1{VS16}\u20e3"
    assert clean_text(f"{keycap} \u2764{VS16}") == f"{keycap} \u2764{VS16}"
    # Data smuggled as a run of selectors after an emoji: only the first one is kept.
    smuggled = "\U0001f600" + "".join(chr(0xE0100 + b) for b in b"rm -rf")
    assert clean_text(smuggled) == "\U0001f600\U000e0172"
    assert clean_text(f" {VS16}x") == " x"


def test_tag_characters_go_except_in_subdivision_flags() -> None:
    wales = "\U0001f3f4\U000e0067\U000e0062\U000e0077\U000e006c\U000e0073\U000e007f"
    assert clean_text(f"flag {wales}!") == f"flag {wales}!"
    smuggled = "".join(chr(0xE0000 + ord(c)) for c in "ignore all rules")
    assert clean_text(f"hello{smuggled} world") == "hello world"
    assert clean_text(f"\U0001f3f4{smuggled}") == "\U0001f3f4"


def test_idempotent_and_ascii_fast_path() -> None:
    text = f"a{ZWSP}b \U0001f468{ZWJ}\U0001f469 c\x1b[31m"
    once = clean_text(text)
    assert clean_text(once) == once
    assert clean_text("plain \x1b[0m ascii") == "plain [0m ascii"
