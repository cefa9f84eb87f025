"""Conversations that stay on their replica: time to first token of an agent conversation through
the gateway, by how the replica is chosen.

    uv run python bench/affinity.py [--rounds 3] [--turns 6] [--independent 12] [--modes ...]

Modes (each its own gateway over the same three replicas, all in one run):
- `cache_aware`: the gateway's LLM route through SGLang's router, `cache_aware` policy, no
  `X-OpenMono-Session` (any client: the prefix of the prompt picks the replica);
- `manual`: the router's `manual` policy with the session header as its routing key
  (`--assignment-mode min_load`: a new session goes to the least-loaded replica);
- `round_robin`: the router's `round_robin` (the baseline of the target);
- `hash`: Caddy's own hash of `X-OpenMono-Session` (no router: what shipped before);
- `least_conn`: Caddy's least_conn, no header, no router.

Starts its own processes on free loopback ports and stops them at the end: three real llama.cpp
servers (xllamacpp + the bundled SmolLM2-135M, one slot of 8192 tokens each, llama.cpp's default
prompt cache settings) behind the gateway (caddy/Caddyfile as shipped).

An agent conversation resends its whole context each turn: a system prompt of ~3,000 tokens (about
the size of the agent's tool catalogue), then per turn a user message or tool result and a short
reply, ~590 new tokens in all, so turn 6 sends ~6,600 tokens (measured 2026-12-03). A replica
that served the previous turn has that prompt cached and evaluates only the new tokens; another
one evaluates more (all of it, or what its cache lacks). Each round runs one conversation with
the header and one without, in alternating order, each with its own random first line so no
cache holds a prefix of it from an earlier conversation. Reported: the median time to first token
of turns 2-6 per mode, their ratio, and the prompt tokens each turn evaluated (llama.cpp's
`timings.prompt_n`).

Independent requests (`--independent`, 3 at a time, ~200-token prompts, 32 tokens out): tokens/s
per mode (a fresh session id each where the mode sends the header), modes in rotating order.
Goals (issue 40): median TTFT of turns 2-6 at least 5x lower than round_robin, without the header
too; independent requests at least 0.95x the tokens/s of least_conn.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # reuse the test support's process handling (free ports, groups)

from bench._chat_stream import stream_chat  # noqa: E402
from tests.support.gateway import gateway  # noqa: E402
from tests.support.llama import llama_server, stack_threads  # noqa: E402
from tests.support.router import llm_router  # noqa: E402

ROUTER_POLICIES = ("cache_aware", "manual", "round_robin")
# which modes send X-OpenMono-Session
WITH_HEADER = {"manual", "hash"}

API_KEY = "bench-affinity-key"
SESSION = "X-OpenMono-Session"
WORDS = [
    "file", "function", "return", "value", "module", "test", "error", "path", "line", "class",
    "import", "call", "result", "list", "read", "write", "check", "build", "run", "change",
    "update", "config", "server", "request", "response", "token", "cache", "slot", "replica",
    "gateway", "agent", "tool", "worker", "session", "prompt", "context", "model", "stream",
    "output", "input", "branch", "commit", "merge", "patch", "string", "number", "object",
    "field", "method", "type",
]  # fmt: skip


@dataclass
class Turn:
    ttft_s: float
    prompt_tokens: int
    evaluated: int  # prompt tokens llama.cpp evaluated (the rest came from its cache)


@dataclass
class Results:
    turns: dict[str, list[list[Turn]]] = field(default_factory=dict)
    tokens_per_s: dict[str, list[float]] = field(default_factory=dict)


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def conversation(
    client: httpx.Client,
    url: str,
    turns: int,
    affinity: bool,
    seed: int,
    system_words: int = 3000,
    turn_words: int = 560,
) -> list[Turn]:
    rng = random.Random(seed)
    # the first line differs per conversation: no cache anywhere holds a prefix of this one
    # SmolLM2's tokenizer makes ~1 token of a word here: 3,000 words, ~3,030 tokens with the rest
    system = f"conversation {uuid.uuid4()}\nYou are a coding agent. Tools:\n" + _text(
        rng, system_words
    )
    messages: list[dict[str, str]] = [{"role": "system", "content": system}]
    headers = {"Authorization": f"Bearer {API_KEY}"}
    if affinity:
        headers[SESSION] = str(uuid.uuid4())
    out = []
    for i in range(turns):
        messages.append({"role": "user", "content": f"step {i}: " + _text(rng, turn_words)})
        answer = stream_chat(client, url, messages, headers).checked()
        prompt = int(answer.usage.get("prompt_tokens", 0))
        out.append(Turn(answer.ttft_s, prompt, answer.evaluated))
        messages.append({"role": "assistant", "content": f"done with step {i}: " + _text(rng, 12)})
    return out


def independent(url: str, n: int, hashed: bool, seed: int) -> float:
    """Completion tokens per second of `n` independent requests, 3 at a time."""
    rng = random.Random(seed)
    prompts = [f"task {uuid.uuid4()}: " + _text(rng, 150) for _ in range(n)]

    def one(prompt: str) -> int:
        headers = {"Authorization": f"Bearer {API_KEY}"}
        if hashed:
            headers[SESSION] = str(uuid.uuid4())
        messages = [{"role": "user", "content": prompt}]
        with httpx.Client(timeout=600) as client:
            answer = stream_chat(client, url, messages, headers, max_tokens=32).checked()
        return int(answer.usage.get("completion_tokens", 0))

    started = time.perf_counter()
    with ThreadPoolExecutor(3) as pool:
        tokens = sum(pool.map(one, prompts))
    return tokens / (time.perf_counter() - started)


def _report(results: Results, turns: int) -> None:
    print(f"\n== agent conversations, {turns} turns, TTFT of turns 2-{turns}")
    medians = {}
    for mode, runs in results.turns.items():
        later = [t for run in runs for t in run[1:]]
        medians[mode] = statistics.median(t.ttft_s for t in later)
        evaluated = statistics.median(t.evaluated for t in later)
        sent = statistics.median(t.prompt_tokens for t in later)
        print(
            f"{mode:11} median TTFT {medians[mode] * 1e3:9.0f} ms   prompt tokens sent (median) "
            f"{sent:6.0f}, evaluated {evaluated:6.0f}   ({len(later)} turns)"
        )
        for i, run in enumerate(runs):
            cells = " ".join(f"{t.ttft_s * 1e3:6.0f}/{t.evaluated:<5d}" for t in run)
            print(f"   round {i + 1}: ms/evaluated per turn: {cells}")
    if "round_robin" in medians:
        for mode, value in medians.items():
            if mode != "round_robin":
                ratio = medians["round_robin"] / value
                print(f"round_robin / {mode} median TTFT: {ratio:.2f}x   (goal: >= 5x)")
    if results.tokens_per_s:
        print("\n== independent requests, 3 at a time")
        tps = {k: statistics.median(v) for k, v in results.tokens_per_s.items()}
        for mode, value in tps.items():
            runs = ", ".join(f"{v:.1f}" for v in results.tokens_per_s[mode])
            print(f"{mode:11} {value:7.1f} tokens/s (median of {runs})")
        if "least_conn" in tps:
            for mode, value in tps.items():
                if mode != "least_conn":
                    print(
                        f"{mode} / least_conn tokens/s: {value / tps['least_conn']:.2f}"
                        "  (goal >= 0.95)"
                    )
    one, five, fifteen = os.getloadavg()
    print(f"\nload average: {one:.1f} {five:.1f} {fifteen:.1f} ({os.cpu_count()} cores)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--turns", type=int, default=6)
    ap.add_argument("--independent", type=int, default=12, help="0 skips the throughput part")
    ap.add_argument("--replicas", type=int, default=3)
    # a smaller conversation for a loaded machine (the shipped sizes: ~6,600 tokens at turn 6)
    ap.add_argument("--system-words", type=int, default=3000)
    ap.add_argument("--turn-words", type=int, default=560)
    ap.add_argument(
        "--modes", default="cache_aware,manual,round_robin,hash,least_conn", help="comma list"
    )
    ap.add_argument(
        "--independent-modes", default="cache_aware,manual,least_conn", help="comma list"
    )
    args = ap.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    ind_modes = [m for m in args.independent_modes.split(",") if m]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    with tempfile.TemporaryDirectory(prefix="bench-affinity-") as tmp_name, ExitStack() as stack:
        tmp = Path(tmp_name)
        # each replica's share of the cores, as `make up` gives it (LLAMA_THREADS unset)
        threads = stack_threads(args.replicas)
        print(
            f"starting {args.replicas} llama-servers (SmolLM2-135M, 1 slot of 8192, "
            f"{threads or 'all'} thread(s) each) ...",
            flush=True,
        )
        replicas = [
            stack.enter_context(
                llama_server(tmp / f"r{i}", api_key=API_KEY, ctx=8192, parallel=1, threads=threads)
            )
            for i in range(args.replicas)
        ]
        upstreams = " ".join(r.url for r in replicas)
        urls: dict[str, str] = {}
        direct = stack.enter_context(gateway(tmp / "gw", api_key=API_KEY, llama_upstream=upstreams))
        for mode in set(modes + ind_modes):
            if mode not in ROUTER_POLICIES:
                urls[mode] = direct.url
                continue
            router = stack.enter_context(
                llm_router(tmp / mode, API_KEY, [r.url for r in replicas], policy=mode)
            )
            env = {"LLAMA_ROUTER": router.address, "LLAMA_ROUTER_METRICS": router.metrics_address}
            gw = stack.enter_context(
                gateway(
                    tmp / f"gw-{mode}", api_key=API_KEY, llama_upstream=upstreams, extra_env=env
                )
            )
            urls[mode] = gw.url
        client = stack.enter_context(httpx.Client(timeout=httpx.Timeout(900.0, connect=10.0)))
        results = Results()
        for r in range(args.rounds):
            shift = r % len(modes) if modes else 0  # `--modes ''`: the throughput part alone
            for mode in modes[shift:] + modes[:shift]:
                header = mode in WITH_HEADER
                run = conversation(
                    client,
                    urls[mode],
                    args.turns,
                    header,
                    seed=1000 * r + len(mode),
                    system_words=args.system_words,
                    turn_words=args.turn_words,
                )
                results.turns.setdefault(mode, []).append(run)
                shown = " ".join(f"{t.ttft_s * 1e3:.0f}" for t in run)
                print(f"round {r + 1} {mode:11}: TTFT ms per turn {shown}", flush=True)
            if args.independent:
                shift = r % len(ind_modes)
                for mode in ind_modes[shift:] + ind_modes[:shift]:
                    tps = independent(urls[mode], args.independent, mode in WITH_HEADER, seed=r)
                    results.tokens_per_s.setdefault(mode, []).append(tps)
                    print(f"round {r + 1} independent {mode:11}: {tps:.1f} tokens/s", flush=True)
        _report(results, args.turns)


if __name__ == "__main__":
    main()
