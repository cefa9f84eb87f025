"""Firecrawl's `json` format on 30 fixture pages (issue 41): schema validity, field accuracy,
model calls per chunk and time per page, on the box's own model or a bigger one.

    uv run python bench/firecrawl_json_pages.py                  # 2 pages per type (make bench)
    uv run python bench/firecrawl_json_pages.py --all --out rows.json
    uv run python bench/firecrawl_json_pages.py --types docs --pages docs-07,docs-08
    uv run python bench/firecrawl_json_pages.py --model gemma3-270m --all   # or a .gguf path
    uv run python bench/firecrawl_json_pages.py --endpoint http://HOST:PORT --key K --all
    uv run python bench/firecrawl_json_pages.py --report rows.json   # the table of a saved run

The pages, their schemas, prompts and true values: bench/data/extract_pages/manifest.json
(10 products, 10 articles, 10 documentation pages, invented, with navigation, cookie banners,
sidebars, related links and footers; three docs pages are longer than one chunk at 8192 tokens).

Started on free loopback ports: the real llama-server (xllamacpp; the bundled SmolLM2-135M, or
`--model`, at `--ctx`/`--parallel`, by default the native stack's 8192 tokens and 1 slot), a
counting proxy in front of it (or in front of `--endpoint`, with `--key` as its bearer), the real
gateway and scrape service (tests/support/web_stack.py) with the proxy as the gateway's LLM
upstream, and a server for the pages. The scrape service's per-call bound is raised to 600 s so
a slow machine measures quality, not its time budget.

Per page, through the gateway's Firecrawl API (`/firecrawl/v2/scrape`): a markdown scrape that
fills the scrape cache, a second one (the baseline: a cache hit), then the `json` format with the
page's schema and prompt (the page comes from the cache). Measured:
- schema-valid: the answer (`data.json`) validates against the page's schema (jsonschema_rs); an
  error answer (a 502 for an answer that ran over its token bound, say) is not valid;
- model calls and chunks: the proxy counts the chat completions the scrape service sends during
  the `json` request; a chunk is a call the model answered (200), a call refused for its context
  (llama.cpp's 400 `exceed_context_size_error`, after which the service halves the chunk) is a
  call without a chunk. The target: calls == chunks, one call per chunk;
- field accuracy against `expected`, each field scored 0..1 and averaged per page (a page whose
  answer is an error scores 0): strings equal after Unicode NFKC, case folding, collapsed
  whitespace, surrounding punctuation taken off and a leading "v" before a digit dropped (v2.3.0
  = 2.3.0); numbers equal within 0.01 or 0.1 % (whichever is larger); booleans equal; lists of
  strings by F1 of the normalized sets (both empty = 1); lists of objects with a `name` (the docs'
  functions) by F1 where a function found by name (its last dotted part: `tidekit.predict` is
  `predict`) counts 0.5 plus 0.5 times the F1 of its parameter names;
- time per page of the `json` request against the baseline of the same page in the same run.
Printed per page type, with the machine's load average; `--out` writes every row as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import socket
import statistics
import sys
import tempfile
import threading
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.client import HTTPConnection, HTTPSConnection
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import jsonschema_rs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # reuse the test support's servers and process handling
sys.path.insert(0, str(ROOT / "bench"))

from _eval_models import ModelUnavailable, resolve_model  # noqa: E402

from tests.support.httpfake import Reply, Seen, serve  # noqa: E402
from tests.support.llama import llama_server  # noqa: E402
from tests.support.web_stack import web_stack  # noqa: E402

DATA = ROOT / "bench" / "data" / "extract_pages"
KEY = "bench-json-pages-key"
TYPES = ("product", "article", "docs")
CHAT = "/v1/chat/completions"


# ---- scoring (the module docstring says how)


def _norm(value: str) -> str:
    text = " ".join(unicodedata.normalize("NFKC", value).casefold().split())
    text = text.strip(" .,;:!?\"'()[]")
    if len(text) > 1 and text[0] == "v" and text[1].isdigit():
        text = text[1:]
    return text


def _f1(got: set[str], want: set[str]) -> float:
    if not got and not want:
        return 1.0
    hit = len(got & want)
    if not hit:
        return 0.0
    precision, recall = hit / len(got), hit / len(want)
    return 2 * precision * recall / (precision + recall)


def _name(value: Any) -> str:
    # a page headed `tidekit.predict(...)` documents `predict`: the module path is not wrong
    return _norm(str(value)).rsplit(".", 1)[-1]


def _named_f1(got: list[Any], want: list[dict[str, Any]]) -> float:
    found = {_name(item.get("name", "")): item for item in got if isinstance(item, dict)}
    credit = 0.0
    for item in want:
        match = found.get(_name(item["name"]))
        if match is not None:
            params = match.get("parameters")
            names = {_norm(str(p)) for p in params} if isinstance(params, list) else set()
            credit += 0.5 + 0.5 * _f1(names, {_norm(p) for p in item["parameters"]})
    if not credit:
        return 0.0
    precision, recall = credit / max(len(found), 1), credit / len(want)
    return 2 * precision * recall / (precision + recall)


def field_score(got: Any, want: Any) -> float:
    if isinstance(want, bool):
        return float(got is want)
    if isinstance(want, int | float):
        if isinstance(got, bool) or not isinstance(got, int | float):
            return 0.0
        return float(abs(got - want) <= max(0.01, abs(want) * 0.001))
    if isinstance(want, str):
        return float(isinstance(got, str) and _norm(got) == _norm(want))
    if isinstance(want, list):
        if not isinstance(got, list):
            return 0.0
        if want and isinstance(want[0], dict):
            return _named_f1(got, want)
        return _f1({_norm(str(g)) for g in got}, {_norm(w) for w in want})
    return float(got == want)


def page_scores(got: Any, want: dict[str, Any]) -> dict[str, float]:
    answer = got if isinstance(got, dict) else {}
    return {key: field_score(answer.get(key), value) for key, value in want.items()}


# ---- the model calls, counted between the gateway and the model


@dataclass
class CallCounter:
    """Chat completions seen, by the upstream's status code (0 while one is in flight)."""

    statuses: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def mark(self) -> int:
        with self.lock:
            return len(self.statuses)

    def since(self, mark: int) -> list[int]:
        with self.lock:
            return self.statuses[mark:]


def _proxy_handler(
    upstream: str, bearer: str | None, counter: CallCounter
) -> type[BaseHTTPRequestHandler]:
    parts = urlsplit(upstream.rstrip("/"))
    opener = HTTPSConnection if parts.scheme == "https" else HTTPConnection
    port = parts.port or (443 if parts.scheme == "https" else 80)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _client_gone(self) -> bool:
            ready, _, _ = select.select([self.connection], [], [], 0)
            return bool(ready) and not self.connection.recv(1, socket.MSG_PEEK)

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {"Content-Type": "application/json"} if body else {}
            auth = f"Bearer {bearer}" if bearer is not None else self.headers.get("Authorization")
            if auth:
                headers["Authorization"] = auth
            conn = opener(parts.hostname or "127.0.0.1", port, timeout=900)
            done, gone = threading.Event(), threading.Event()

            def watch() -> None:
                # The scrape service gave up (its time bound) and the gateway closed this call:
                # close the model's side too, so llama-server stops generating for nobody and the
                # next page does not queue behind it (Caddy to llama-server does the same).
                while not done.wait(0.5):
                    if self._client_gone() and conn.sock is not None:
                        gone.set()
                        conn.sock.shutdown(socket.SHUT_RDWR)
                        return

            counted = self.command == "POST" and self.path.split("?")[0] == CHAT
            if counted:  # counted when it starts: an abandoned call is over before it answers
                with counter.lock:
                    slot = len(counter.statuses)
                    counter.statuses.append(0)
            watcher = threading.Thread(target=watch, daemon=True)
            watcher.start()
            try:
                conn.request(self.command, parts.path + self.path, body=body, headers=headers)
                resp = conn.getresponse()
                status, data = resp.status, resp.read()
                ctype = resp.getheader("Content-Type", "application/json")
            except OSError as exc:
                status = 499 if gone.is_set() else 502
                data, ctype = json.dumps({"error": repr(exc)}).encode(), "application/json"
            finally:
                done.set()
                conn.close()
            if counted:
                with counter.lock:
                    counter.statuses[slot] = status
            if gone.is_set():
                return  # nobody to answer
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = _serve
        do_POST = _serve

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@contextmanager
def counting_proxy(upstream: str, bearer: str | None) -> Iterator[tuple[str, CallCounter]]:
    """A reverse proxy to `upstream` that counts POSTs to the chat completions path (a call the
    scrape service abandoned counts with status 499); `bearer` replaces the gateway's upstream
    key (a foreign endpoint has its own)."""
    counter = CallCounter()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _proxy_handler(upstream, bearer, counter))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1})
    thread.daemon = True
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", counter
    finally:
        httpd.shutdown()
        httpd.server_close()


# ---- the pages


def load_manifest() -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((DATA / "manifest.json").read_text())
    return manifest


def manifest_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = load_manifest()["pages"]
    return rows


@contextmanager
def page_server() -> Iterator[str]:
    def handle(req: Seen) -> Reply:
        path = DATA / req.path.lstrip("/")
        if path.suffix != ".html" or path.parent != DATA or not path.is_file():
            return Reply(404, b"not found")
        return Reply(200, path.read_bytes(), "text/html; charset=utf-8")

    with serve(handle) as server:
        yield server.url


def chosen(manifest: dict[str, Any], args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = [r for r in manifest["pages"] if r["type"] in args.types]
    if args.pages:
        wanted = [p.strip() for p in args.pages.split(",") if p.strip()]
        return [r for r in rows if any(r["page"].startswith(w) for w in wanted)]
    by_type = [[r for r in rows if r["type"] == kind] for kind in TYPES]
    if args.all:
        # pages longer than a chunk first: the only ones that merge answers, and the slowest
        by_type = [sorted(got, key=lambda r: not r.get("long", False)) for got in by_type]
    else:
        by_type = [got[: args.per_type] for got in by_type]
    # types take turns, so a run stopped early (or a machine whose load changes) still covers all
    turns = zip(*(got + [None] * (len(rows) - len(got)) for got in by_type), strict=True)
    return [r for turn in turns for r in turn if r is not None]


# ---- the run


def run_page(
    client: httpx.Client,
    url: str,
    page_url: str,
    row: dict[str, Any],
    manifest: dict[str, Any],
    counter: CallCounter,
) -> dict[str, Any]:
    schema = manifest["schemas"][row["type"]]
    prompt = manifest["prompts"][row["type"]]
    client.post(url, json={"url": page_url}).raise_for_status()  # into the scrape cache
    start = time.perf_counter()
    base = client.post(url, json={"url": page_url})
    base_s = time.perf_counter() - start
    base.raise_for_status()
    markdown = base.json()["data"].get("markdown") or ""
    mark = counter.mark()
    fmt = {"type": "json", "schema": schema, "prompt": prompt}
    start = time.perf_counter()
    resp = client.post(url, json={"url": page_url, "formats": [fmt]})
    json_s = time.perf_counter() - start
    statuses = counter.since(mark)
    body = resp.json()
    data = body.get("data") or {}
    answer = data.get("json")
    valid = resp.status_code == 200 and jsonschema_rs.validator_for(schema).is_valid(answer)
    scores = page_scores(answer if valid else None, row["expected"])
    return {
        "page": row["page"],
        "type": row["type"],
        "long": row.get("long", False),
        "status": resp.status_code,
        "error": None if resp.status_code == 200 else body.get("error"),
        "warning": data.get("warning") or body.get("warning"),
        "cache": (data.get("metadata") or {}).get("cacheState"),
        "markdown_chars": len(markdown),
        "valid": valid,
        "answer": answer,
        "scores": scores,
        "accuracy": statistics.fmean(scores.values()),
        "calls": len(statuses),
        "chunks": sum(1 for s in statuses if s == 200),
        "json_s": json_s,
        "markdown_s": base_s,
    }


def report(rows: list[dict[str, Any]], model: str, ctx: int, parallel: int) -> None:
    print(f"model: {model}; context {ctx} tokens, {parallel} slot(s) ({ctx // parallel} per slot)")
    loads = [r["load"] for r in rows if "load" in r]
    print(
        f"1-minute load average after each page: {min(loads):.1f} to {max(loads):.1f}, median "
        f"{statistics.median(loads):.1f} (2 cores here)"
    )
    head = (
        f"{'type':8s} {'valid':>6s} {'accuracy':>8s} {'json med':>9s} {'md med':>8s} "
        f"{'x md':>7s} {'calls':>5s} {'chunks':>6s}  per field"
    )
    print(head)
    for kind in TYPES:
        got = [r for r in rows if r["type"] == kind]
        if not got:
            continue
        valid = sum(r["valid"] for r in got)
        acc = statistics.fmean(r["accuracy"] for r in got)
        json_med = statistics.median(r["json_s"] for r in got)
        md_med = statistics.median(r["markdown_s"] for r in got)
        fields = {k: statistics.fmean(r["scores"][k] for r in got) for k in got[0]["scores"]}
        per_field = " ".join(f"{k}={v:.2f}" for k, v in fields.items())
        print(
            f"{kind:8s} {valid:>3d}/{len(got):<2d} {acc:8.2f} {json_med:8.1f}s "
            f"{md_med * 1000:6.1f}ms {json_med / md_med:7.0f} {sum(r['calls'] for r in got):5d} "
            f"{sum(r['chunks'] for r in got):6d}  {per_field}"
        )
    valid = sum(r["valid"] for r in rows)
    print(
        f"all: {valid}/{len(rows)} schema-valid; calls {sum(r['calls'] for r in rows)}, "
        f"chunks {sum(r['chunks'] for r in rows)}"
    )
    for r in rows:
        if not r["valid"] or r["calls"] != r["chunks"] or r["chunks"] > 1 or r["warning"]:
            print(
                f"  {r['page']}: HTTP {r['status']} calls {r['calls']} chunks {r['chunks']} "
                f"cache {r['cache']} {r['error'] or ''} {r['warning'] or ''}".rstrip()
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--types", default=",".join(TYPES), help="comma-separated page types")
    parser.add_argument("--pages", default="", help="comma-separated page name prefixes")
    parser.add_argument("--all", action="store_true", help="all pages of the chosen types")
    parser.add_argument("--per-type", type=int, default=2, help="pages per type by default")
    parser.add_argument("--model", help="serve this model: a .gguf path or gemma3-270m")
    parser.add_argument("--template", help="chat template for --model (a shipped name or path)")
    parser.add_argument("--endpoint", help="an OpenAI-compatible server with llama.cpp's /props")
    parser.add_argument("--key", default="", help="the bearer key of --endpoint")
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--out", type=Path, help="write every row as JSON here")
    parser.add_argument("--report", type=Path, help="print the table of an --out file, no run")
    args = parser.parse_args()
    if args.report:
        saved = json.loads(args.report.read_text())
        run = saved["run"]
        truth = {row["page"]: row["expected"] for row in manifest_rows()}
        for row in saved["rows"]:  # scored again: the rules may have changed since the run
            row["scores"] = page_scores(row["answer"] if row["valid"] else None, truth[row["page"]])
            row["accuracy"] = statistics.fmean(row["scores"].values())
        print(f"{args.report} ({run['date']}, load average at its last page {run['loadavg']})")
        report(saved["rows"], run["model"], run["ctx"], run["parallel"])
        return
    args.types = [t.strip() for t in args.types.split(",") if t.strip()]
    manifest = load_manifest()
    rows_in = chosen(manifest, args)
    if not rows_in:
        raise SystemExit("no page chosen")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        with serving(args, tmp) as (upstream, bearer, model_name):
            rows = measure(args, tmp, upstream, bearer, manifest, rows_in, model_name)
    report(rows, model_name, args.ctx, args.parallel)


def write_rows(args: argparse.Namespace, model_name: str, rows: list[dict[str, Any]]) -> None:
    """Every row so far (after each page: a long run stopped early keeps what it measured)."""
    if not args.out:
        return
    meta = {
        "model": model_name,
        "ctx": args.ctx,
        "parallel": args.parallel,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "loadavg": os.getloadavg(),
    }
    args.out.write_text(json.dumps({"run": meta, "rows": rows}, indent=1) + "\n")


@contextmanager
def serving(args: argparse.Namespace, tmp: Path) -> Iterator[tuple[str, str | None, str]]:
    """The model the proxy forwards to: `--endpoint`, or a private llama-server."""
    if args.endpoint:
        yield args.endpoint, args.key, f"endpoint {args.endpoint}"
        return
    model, template, name = None, args.template, "bundled SmolLM2-135M-Instruct Q4_1"
    if args.model:
        try:
            chosen_model = resolve_model(args.model, tmp / "models")
        except ModelUnavailable as exc:
            raise SystemExit(f"--model {args.model}: {exc}") from None
        model, name = chosen_model.path, chosen_model.describe()
        template = template or chosen_model.template
    with llama_server(
        tmp, ctx=args.ctx, parallel=args.parallel, model=model, template=template
    ) as llama:
        yield llama.url, None, name


def measure(
    args: argparse.Namespace,
    tmp: Path,
    upstream: str,
    bearer: str | None,
    manifest: dict[str, Any],
    rows_in: list[dict[str, Any]],
    model_name: str,
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with (
        counting_proxy(upstream, bearer) as (proxy, counter),
        page_server() as pages,
        web_stack(
            tmp,
            KEY,
            [],
            scrape_env={"SCRAPE_LLM_TIMEOUT_S": "600"},
            llama_upstream=proxy.removeprefix("http://"),
            gateway_env={"LLAMA_UPSTREAM_KEY": "test-llama-key"},
        ) as stack,
        httpx.Client(timeout=1800, headers=stack.gateway.auth) as client,
    ):
        url = f"{stack.firecrawl}/v2/scrape"
        for row in rows_in:
            got = run_page(client, url, f"{pages}/{row['page']}", row, manifest, counter)
            print(
                f"{got['page']:42s} HTTP {got['status']} valid {got['valid']!s:5s} "
                f"acc {got['accuracy']:.2f} {got['json_s']:6.1f}s calls {got['calls']} "
                f"chunks {got['chunks']} load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
            got["load"] = os.getloadavg()[0]
            rows.append(got)
            write_rows(args, model_name, rows)
    return rows


if __name__ == "__main__":
    main()
