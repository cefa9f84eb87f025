"""Article-extraction benchmark: OpenMono's extractor next to trafilatura's plain text, same run.

Data: `../shared/datasets/article-extraction-benchmark/` beside the repository (181 real pages and
the hand-made article text of each). Metric, as its README defines it: per page, 4-token shingles
(tokens are `\\w+` matches) of the extracted text against the truth give tp/fp/fn normalised to sum
1; precision and recall are averaged over pages and F1 = 2PR/(P+R) of those averages.

Our markdown is scored as the text a reader sees: link targets, image URLs, fences, emphasis marks
and escapes are stripped before scoring (they are not words on the page). Both extractors run on
each page in turn, so load from other processes hits both alike; pages/s (wall and per CPU-second of
this process) and p50/p99 per-page latency are printed with the ratio to trafilatura.

Usage: uv run python bench/extraction.py [--limit N] [--dataset PATH]
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DATASET = REPO_ROOT.parent / "shared" / "datasets" / "article-extraction-benchmark"

_TOKEN = re.compile(r"\w+")
_IMAGE = re.compile(r"!\[(?:[^\]\\]|\\.)*\]\([^)\s]*\)")
_LINK = re.compile(r"\[((?:[^\]\\]|\\.)*)\]\([^)\s]*\)")
_FENCE = re.compile(r"^[ \t>]*(?:`{3,}|~{3,})[^\n]*$", re.M)
_ORDERED_MARKER = re.compile(r"^([ \t>]*)\d{1,9}[.)](?=\s)", re.M)
_MARKUP = re.compile(r"(?<!\\)(?:\*+|`+|~~)")
_ESCAPE = re.compile(r"\\(.)")


@dataclass(frozen=True)
class Page:
    """One benchmark page: its id, URL, decoded HTML and the true article text."""

    id: str
    url: str
    html: str
    truth: str


@dataclass(frozen=True)
class Scores:
    """Averaged precision and recall over pages, and F1 of those averages."""

    precision: float
    recall: float
    f1: float


def dataset_dir(explicit: Path | None = None) -> Path | None:
    """The dataset folder if it is there (ground truth and pages), else None."""
    path = explicit or DATASET
    return path if (path / "ground-truth.json").is_file() and (path / "html").is_dir() else None


def load_pages(path: Path, limit: int | None = None) -> list[Page]:
    """The pages in id order (the first `limit` of them when given)."""
    truth = json.loads((path / "ground-truth.json").read_text(encoding="utf-8"))
    pages = []
    for page_id in sorted(truth)[:limit]:
        raw = gzip.decompress((path / "html" / f"{page_id}.html.gz").read_bytes())
        item = truth[page_id]
        pages.append(Page(page_id, item.get("url", ""), raw.decode("utf-8"), item["articleBody"]))
    return pages


def reader_text(markdown: str) -> str:
    """What a reader sees of our markdown: no URLs, fences, emphasis marks, list numbers."""
    text = _IMAGE.sub("", markdown)
    text = _LINK.sub(r"\1", text)
    text = _FENCE.sub("", text)
    text = _ORDERED_MARKER.sub(r"\1", text)
    text = _MARKUP.sub("", text)
    return _ESCAPE.sub(r"\1", text)


def _shingles(text: str) -> Counter[tuple[str, ...]]:
    tokens = _TOKEN.findall(text)
    return Counter(tuple(tokens[i : i + 4]) for i in range(max(1, len(tokens) - 3)) if tokens)


def page_counts(truth: str, predicted: str) -> tuple[float, float, float]:
    """tp, fp, fn over 4-token shingles, normalised to sum 1 (all zero when both are empty)."""
    expected, got = _shingles(truth), _shingles(predicted)
    tp = sum((expected & got).values())
    fp = sum((got - expected).values())
    fn = sum((expected - got).values())
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def scores(counts: list[tuple[float, float, float]]) -> Scores:
    precisions = [_ratio(tp, fp, fn, fp) for tp, fp, fn in counts if tp + fp > 0]
    recalls = [_ratio(tp, fp, fn, fn) for tp, fp, fn in counts if tp + fn > 0]
    precision = statistics.mean(precisions) if precisions else 0.0
    recall = statistics.mean(recalls) if recalls else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Scores(precision, recall, f1)


def _ratio(tp: float, fp: float, fn: float, miss: float) -> float:
    if fp == fn == 0:
        return 1.0
    if tp == miss == 0:
        return 0.0
    return tp / (tp + miss)


def ours_markdown(page: Page) -> str:
    from openmono_scrape.extract import extract

    return reader_text(extract(page.html, page.url, "markdown", True).content)


def ours_text(page: Page) -> str:
    from openmono_scrape.extract import extract

    return extract(page.html, page.url, "text", True).content


def trafilatura_text(page: Page) -> str:
    import trafilatura

    return trafilatura.extract(page.html, url=page.url, include_comments=False) or ""


Extractor = Callable[[Page], str]
CONTENDERS: dict[str, Extractor] = {
    "openmono markdown (reader text)": ours_markdown,
    "openmono text": ours_text,
    "trafilatura text (baseline)": trafilatura_text,
}


@dataclass(frozen=True)
class Result:
    """One contender's scores, wall seconds per page, and total CPU seconds of this process."""

    scores: Scores
    seconds: list[float]
    cpu_seconds: float


def run(pages: list[Page]) -> dict[str, Result]:
    """Each contender on each page in turn (so load from other processes hits all alike)."""
    for extractor in CONTENDERS.values():  # warm imports and lazy tables outside the clock
        extractor(pages[0])
    counts: dict[str, list[tuple[float, float, float]]] = {name: [] for name in CONTENDERS}
    seconds: dict[str, list[float]] = {name: [] for name in CONTENDERS}
    cpu: dict[str, float] = dict.fromkeys(CONTENDERS, 0.0)
    for page in pages:
        for name, extractor in CONTENDERS.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            output = extractor(page)
            seconds[name].append(time.perf_counter() - start)
            cpu[name] += time.process_time() - start_cpu
            counts[name].append(page_counts(page.truth, output))
    return {name: Result(scores(counts[name]), seconds[name], cpu[name]) for name in CONTENDERS}


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N pages")
    parser.add_argument("--dataset", type=Path, default=None, help=f"default: {DATASET}")
    args = parser.parse_args(argv)
    path = dataset_dir(args.dataset)
    if path is None:
        # Skipped, not failed: `make bench` goes on with the other benchmarks.
        print(
            f"SKIPPED: dataset not found at {args.dataset or DATASET}; this benchmark needs "
            "shared/ checked out beside the repository (shared/datasets/article-extraction-"
            "benchmark/ with ground-truth.json and html/)",
            file=sys.stderr,
        )
        return 0
    pages = load_pages(path, args.limit)
    results = run(pages)
    baseline_rate = len(pages) / sum(results["trafilatura text (baseline)"].seconds)
    print(f"{len(pages)} pages from {path}")
    print("markdown is scored as reader text: link targets and markdown markup stripped first")
    print("pages/cpu-s counts this process's CPU time only: the rate on an otherwise idle core")
    print(
        f"{'extractor':34} {'F1':>6} {'prec':>6} {'recall':>6} {'pages/s':>8} "
        f"{'pages/cpu-s':>11} {'p50 ms':>7} {'p99 ms':>7} {'speed vs trafilatura':>21}"
    )
    for name, result in results.items():
        rate = len(pages) / sum(result.seconds)
        score = result.scores
        print(
            f"{name:34} {score.f1:6.4f} {score.precision:6.4f} {score.recall:6.4f} {rate:8.1f} "
            f"{len(pages) / result.cpu_seconds:11.1f} "
            f"{_quantile(result.seconds, 0.5) * 1000:7.1f} "
            f"{_quantile(result.seconds, 0.99) * 1000:7.1f} {rate / baseline_rate:20.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
