"""What a Firecrawl screenshot and actions cost over a plain browser render, in the same run.

    uv run python bench/firecrawl_shot.py [--rounds 7]

Starts the fixture site and the real scrape service (Debian's Chromium through Scrapling) on
free loopback ports, warms the browser, then per round, in rotating order so the three share the
machine's load, scrapes the fixture's interactive page through `/firecrawl/v2/scrape`:
1. baseline: rendered in the browser (`waitFor: 1`), never from the cache (`maxAge: 0`);
2. `formats: ["markdown", "screenshot"]` (the 1920x1080 viewport, PNG);
3. `actions`: click, scrape, executeJavascript, then the markdown.
Prints medians, their ratio to the baseline, and the screenshot's size.
"""

from __future__ import annotations

import argparse
import base64
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # reuse the test support's servers and process handling

from tests.support.fixture_web import fixture_web, scrape_service  # noqa: E402

ACTIONS = [
    {"type": "click", "selector": "#reveal"},
    {"type": "scrape"},
    {"type": "executeJavascript", "script": "return window.harbour"},
]


def _timed(svc: str, body: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    resp = httpx.post(f"{svc}/firecrawl/v2/scrape", json=body, timeout=120)
    elapsed = (time.perf_counter() - start) * 1000.0
    resp.raise_for_status()
    data: dict[str, Any] = resp.json()["data"]
    return elapsed, data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-shot-")
    with fixture_web(Path(tmp)) as web, scrape_service(Path(tmp)) as svc:
        url = f"{web}/interactive"
        cases: dict[str, dict[str, Any]] = {
            "render (baseline)": {"url": url, "waitFor": 1, "maxAge": 0},
            "screenshot": {"url": url, "formats": ["markdown", "screenshot"]},
            "actions (3)": {"url": url, "actions": ACTIONS},
        }
        _timed(svc, cases["render (baseline)"])  # the browser's cold start
        times: dict[str, list[float]] = {name: [] for name in cases}
        shot_bytes = 0
        names = list(cases)
        for n in range(args.rounds):
            for name in names[n % 3 :] + names[: n % 3]:
                ms, data = _timed(svc, cases[name])
                times[name].append(ms)
                if "screenshot" in data:
                    shot_bytes = len(base64.b64decode(data["screenshot"].partition(",")[2]))
    shutil.rmtree(tmp, ignore_errors=True)
    base = statistics.median(times["render (baseline)"])
    for name, values in times.items():
        med = statistics.median(values)
        print(f"{name:20s} median {med:7.1f} ms  x{med / base:4.2f}  ({len(values)} rounds)")
    print(f"screenshot PNG: {shot_bytes} bytes (1920x1080, the fixture page)")


if __name__ == "__main__":
    main()
