"""Extraction quality floor on real pages of the shared article benchmark (bench/extraction.py).

A dozen pages keep this under a few seconds; the full 181-page run is `bench/extraction.py`. The
floor sits below today's score on these pages (about 0.97) so only a real regression trips it.
"""

from __future__ import annotations

import pytest

from bench.extraction import (
    dataset_dir,
    load_pages,
    ours_markdown,
    page_counts,
    reader_text,
    scores,
)

PAGES = 12
F1_FLOOR = 0.93


def test_reader_text_strips_markdown_markup() -> None:
    markdown = (
        "## Title\n\n1. See [the *docs*](https://x.org/a_b) and ![logo](https://x.org/l.png)\n\n"
        "```python\nsnake_case = 1\n```\n\n| a | b |\n| --- | --- |\n| \\*x\\* | `y` |"
    )
    text = reader_text(markdown)
    assert "https" not in text and "python" not in text and "logo" not in text
    assert "See the docs and" in text and "snake_case = 1" in text and "*x*" in text


def test_metric_counts_shingles() -> None:
    assert page_counts("one two three four five", "one two three four five") == (1.0, 0.0, 0.0)
    tp, fp, fn = page_counts("one two three four five", "one two three four")
    assert (tp, fp, fn) == (0.5, 0.0, 0.5)
    assert scores([(1.0, 0.0, 0.0), (0.5, 0.0, 0.5)]).f1 == pytest.approx(2 * 0.75 / 1.75)


def test_extraction_f1_floor_on_benchmark_pages() -> None:
    path = dataset_dir()
    if path is None:
        pytest.skip(
            "shared/datasets/article-extraction-benchmark is not checked out beside the repo"
        )
    pages = load_pages(path, PAGES)
    result = scores([page_counts(page.truth, reader_text(ours_markdown(page))) for page in pages])
    assert result.f1 >= F1_FLOOR, result


def test_wcxb_word_f1_is_a_multiset_f1_over_lowercased_words() -> None:
    from bench._wcxb import TypedPage, type_table, word_f1

    assert word_f1("The cat sat", "the CAT sat") == 1.0
    assert word_f1("a a b", "a b") == pytest.approx(2 * 1.0 * (2 / 3) / (1 + 2 / 3))
    assert word_f1("", "") == 1.0 and word_f1("", "noise") == 0.0 and word_f1("x", "") == 0.0
    pages = [TypedPage("0001", "forum", "", "", ""), TypedPage("0002", "forum", "", "", "")]
    rows = type_table(pages, {"ours": [1.0, 0.5]})
    assert rows[1].split()[:5] == ["forum", "2", "0.750", "0.500", "1.000"]
