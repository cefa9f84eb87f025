"""Time per page of Firecrawl's `json` and `summary` formats on the box's own model, against a
plain markdown scrape of the same cached page in the same run.

    uv run python bench/firecrawl_model.py [--rounds 5] [--ctx 2048] [--parallel 2]

Starts the real llama-server (xllamacpp + the bundled SmolLM2-135M, `--ctx`/`--parallel` as the
native stack would, n_ctx per slot = ctx / parallel), the real gateway and the real scrape
service (tests/support/web_stack.py), all on free loopback ports, and the fixture site's article
(~1 KB of text: one chunk). Each round scrapes the page three ways through the gateway, in turn
so they share the machine's load: markdown (the baseline: a cache hit), `json` with a two-field
schema, `summary`. Prints medians, ratios, the machine's load average, and checks every `json`
answer against its schema (the count of valid answers is printed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
import jsonschema_rs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # reuse the test support's servers and process handling

from tests.support.fixture_web import ARTICLE_SCHEMA as SCHEMA  # noqa: E402
from tests.support.fixture_web import fixture_web  # noqa: E402
from tests.support.llama import llama_server  # noqa: E402
from tests.support.web_stack import web_stack  # noqa: E402

KEY = "bench-firecrawl-model-key"
FORMATS: dict[str, list[object]] = {
    "markdown": ["markdown"],
    "json": [{"type": "json", "schema": SCHEMA, "prompt": "The title and the author."}],
    "summary": ["summary"],
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ctx", type=int, default=2048)
    parser.add_argument("--parallel", type=int, default=2)
    args = parser.parse_args()
    validator = jsonschema_rs.validator_for(SCHEMA)
    times: dict[str, list[float]] = {name: [] for name in FORMATS}
    valid = 0
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        with (
            llama_server(tmp, ctx=args.ctx, parallel=args.parallel) as llama,
            fixture_web(tmp) as web,
            web_stack(
                tmp,
                KEY,
                [],
                llama_upstream=llama.url.removeprefix("http://"),
                gateway_env={"LLAMA_UPSTREAM_KEY": llama.api_key},
            ) as stack,
            httpx.Client(timeout=300, headers=stack.gateway.auth) as client,
        ):
            url = f"{stack.firecrawl}/v2/scrape"
            page = f"{web}/article"
            client.post(url, json={"url": page}).raise_for_status()  # cached from here on
            for _ in range(args.rounds):
                for name, formats in FORMATS.items():
                    start = time.perf_counter()
                    resp = client.post(url, json={"url": page, "formats": formats})
                    times[name].append(time.perf_counter() - start)
                    resp.raise_for_status()
                    data = resp.json()["data"]
                    if name == "json" and validator.is_valid(data.get("json")):
                        valid += 1
                    if name == "summary":
                        assert data.get("summary", "").strip(), "empty summary"
    base = statistics.median(times["markdown"])
    print(f"load average at the end: {os.getloadavg()[0]:.2f} (2 cores here)")
    print(f"model context per slot: {args.ctx // args.parallel} tokens; {args.rounds} rounds")
    for name, got in times.items():
        med = statistics.median(got)
        print(f"{name:8s} median {med * 1000:9.1f} ms  x{med / base:8.1f} vs markdown")
    print(f"json answers valid for the schema: {valid}/{args.rounds}")


if __name__ == "__main__":
    main()
