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
    result = scores([page_counts(page.truth, ours_markdown(page)) for page in pages])
    assert result.f1 >= F1_FLOOR, result
