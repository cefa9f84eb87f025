"""The wcxb development split for bench/extraction.py: pages, page types and word F1.

Data: `../shared/datasets/wcxb-dev/` beside the repository (1,497 real pages of seven page types,
WCXB v1.0, CC-BY-4.0). Metric, as its README defines it: per page, F1 between the multisets of
lower-cased `\\w+` words of the extracted text and of `ground_truth.main_content`; the score is
the mean over pages, overall and per page type. A page whose truth is empty scores 1 when the
extraction is empty too, else 0. The two files without `main_content` are skipped (1,495 pages).
Halves: even and odd page ids, so a change tuned on one half can be checked on the other.
"""

from __future__ import annotations

import gzip
import json
import re
import statistics
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DATASET = REPO_ROOT.parent / "shared" / "datasets" / "wcxb-dev"
PAGE_TYPES = ("article", "documentation", "service", "product", "listing", "forum", "collection")

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class TypedPage:
    """One wcxb page: id, page type, URL, decoded HTML and the true main text."""

    id: str
    page_type: str
    url: str
    html: str
    truth: str


def dataset_dir(explicit: Path | None = None) -> Path | None:
    """The dataset folder if it is there (ground truth and pages), else None."""
    path = explicit or DATASET
    return path if (path / "ground-truth").is_dir() and (path / "html").is_dir() else None


def load_pages(path: Path, limit: int | None = None) -> list[TypedPage]:
    """The scored pages in id order (the first `limit` of them when given)."""
    pages = []
    for file in sorted((path / "ground-truth").glob("*.json"))[:limit]:
        record = json.loads(file.read_text(encoding="utf-8"))
        truth = (record.get("ground_truth") or {}).get("main_content")
        if truth is None:
            continue
        raw = gzip.decompress((path / "html" / f"{file.stem}.html.gz").read_bytes())
        page_type = record["_internal"]["page_type"]["primary"]
        html = raw.decode("utf-8", errors="replace")
        pages.append(TypedPage(file.stem, page_type, record.get("url", ""), html, truth))
    return pages


def word_f1(truth: str, predicted: str) -> float:
    """Word-multiset F1 of one page (1.0 when both are empty)."""
    expected = Counter(_WORD.findall(truth.lower()))
    got = Counter(_WORD.findall(predicted.lower()))
    if not expected or not got:
        return 1.0 if not expected and not got else 0.0
    tp = sum((expected & got).values())
    if not tp:
        return 0.0
    precision, recall = tp / sum(got.values()), tp / sum(expected.values())
    return 2 * precision * recall / (precision + recall)


def type_table(pages: list[TypedPage], scores: dict[str, list[float]]) -> list[str]:
    """Per-type rows: pages, then each contender's mean F1 on all/even/odd page ids."""
    names = list(scores)
    header = f"{'page type':14} {'pages':>5}" + "".join(
        f" {name[:22]:>22} {'even':>6} {'odd':>6}" for name in names
    )
    rows = [header]
    for page_type in (*PAGE_TYPES, "overall"):
        index = [i for i, p in enumerate(pages) if page_type in ("overall", p.page_type)]
        if not index:
            continue
        line = f"{page_type:14} {len(index):5}"
        for name in names:
            values = scores[name]
            line += f" {_mean(values, index):22.3f}"
            line += f" {_mean(values, [i for i in index if int(pages[i].id) % 2 == 0]):6.3f}"
            line += f" {_mean(values, [i for i in index if int(pages[i].id) % 2 == 1]):6.3f}"
        rows.append(line)
    return rows


def _mean(values: list[float], index: list[int]) -> float:
    return statistics.mean(values[i] for i in index) if index else float("nan")


# The goals on this split: this overall mean F1, and no page type below any baseline.
GOAL_OVERALL = 0.87


def goal_lines(pages: list[TypedPage], scores: dict[str, list[float]]) -> list[str]:
    """Whether the first contender meets the goals against every other one, per type and overall."""
    ours_name, *baselines = scores
    ours = scores[ours_name]
    everything = list(range(len(pages)))
    overall = _mean(ours, everything)
    lines = [
        f"goal: overall {overall:.3f} vs {GOAL_OVERALL} -> "
        f"{'met' if overall >= GOAL_OVERALL else 'NOT met'}"
    ]
    below = []
    for page_type in PAGE_TYPES:
        index = [i for i, p in enumerate(pages) if p.page_type == page_type]
        if not index:
            continue
        mine = _mean(ours, index)
        for name in baselines:
            theirs = _mean(scores[name], index)
            if mine < theirs:
                below.append(f"{page_type} {mine:.3f} < {name} {theirs:.3f}")
    lines.append(
        "goal: no page type below a baseline -> "
        + ("met" if not below else "NOT met: " + "; ".join(below))
    )
    return lines
