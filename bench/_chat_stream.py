"""One streamed chat completion read to its end, for the benches that time llama.cpp behind the
gateway (bench/affinity.py, bench/failover.py): the time to the first content token, what
llama.cpp says it evaluated (`timings`), the usage, whether the stream ended with `[DONE]`, and
an error event or a non-200 body, without raising.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

CHAT = "/v1/chat/completions"


@dataclass
class Answer:
    status: int
    ttft_s: float  # to the first content token (to the end when none came)
    evaluated: int  # prompt tokens llama.cpp evaluated (the rest came from its cache); -1 unsaid
    prefill_s: float  # the replica's own time evaluating them (llama.cpp's `timings.prompt_ms`)
    done: bool  # the stream ended with [DONE]
    error: str  # an error event or a non-200 body, else ""
    usage: dict[str, Any] = field(default_factory=dict)  # the last `usage` sent

    @property
    def clean(self) -> bool:
        return self.status == 200 and self.done and not self.error

    def checked(self) -> Answer:
        """This answer, or a RuntimeError when it was not a 200."""
        if self.status != 200:
            raise RuntimeError(f"HTTP {self.status}: {self.error}")
        return self


def stream_chat(
    client: httpx.Client,
    url: str,
    messages: list[dict[str, str]],
    headers: dict[str, str],
    max_tokens: int = 16,
) -> Answer:
    """`messages` sent streamed at temperature 0, with the usage asked for."""
    body = {
        "messages": messages,
        "stream": True,
        "max_tokens": max_tokens,
        "temperature": 0,
        "stream_options": {"include_usage": True},
    }
    started = time.perf_counter()
    first = 0.0
    evaluated, prefill_s, done, error = -1, 0.0, False, ""
    usage: dict[str, Any] = {}
    with client.stream("POST", f"{url}{CHAT}", json=body, headers=headers) as resp:
        if resp.status_code != 200:
            text = resp.read()[:300].decode(errors="replace")
            return Answer(resp.status_code, 0.0, -1, 0.0, False, text)
        for line in resp.iter_lines():
            if line.strip() == "data: [DONE]":
                done = True
                continue
            if not line.startswith("data: {"):
                continue
            chunk = json.loads(line[6:])
            if "error" in chunk:
                error = json.dumps(chunk["error"])[:300]
            delta = (chunk.get("choices") or [{}])[0].get("delta") or {}
            if not first and delta.get("content"):
                first = time.perf_counter() - started
            if chunk.get("usage"):
                usage = chunk["usage"]
            if chunk.get("timings"):
                evaluated = int(chunk["timings"].get("prompt_n", -1))
                prefill_s = float(chunk["timings"].get("prompt_ms", 0.0)) / 1e3
    ttft = first or (time.perf_counter() - started)
    return Answer(200, ttft, evaluated, prefill_s, done, error, usage)
