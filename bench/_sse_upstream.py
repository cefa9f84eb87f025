"""A minimal SSE upstream for benchmarks: every request gets N chat-completion-shaped events.

It does no work between events, so timing a request through the gateway against the same request
sent straight here isolates the proxy's own cost. HTTP/1.1 keep-alive, chunked transfer encoding,
one `data:` event per chunk, a last event with llama-server's `usage` and `timings` (prompt
tokens: the request body's length in bytes; completion tokens: the events), then `data: [DONE]`.
With `--interval-ms` it stands in for a model with a fixed per-token latency (bench/scale.py),
and `--slots N` serves at most N streams at once
(the others wait, as requests wait for a free slot of llama-server's `--parallel`). `--name` puts
an `X-Openmono-Replica` header on every response, so a test or benchmark behind the gateway sees
which replica answered. `GET /v1/models` gets a model list, as llama-server's (a JSON object: the
gateway's key service reads it whole for a box key, to take the model's path out).

    python bench/_sse_upstream.py --port 8099 [--events 8] [--interval-ms 0] [--slots 0] [--name r1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal


def _event(i: int) -> bytes:
    chunk = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": f"tok{i} "}, "finish_reason": None}],
    }
    return f"data: {json.dumps(chunk)}\n\n".encode()


def _usage(prompt: int, events: int) -> bytes:
    usage = {"prompt_tokens": prompt, "completion_tokens": events, "total_tokens": prompt + events}
    timings = {"cache_n": 0, "prompt_n": prompt, "predicted_n": events}
    last = {"id": "chatcmpl-bench", "choices": [], "usage": usage, "timings": timings}
    return f"data: {json.dumps(last)}\n\n".encode()


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


HEALTH = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n"
    b'{"status":"ok"}'
)


def _models(name: str) -> bytes:
    body = json.dumps(
        {"object": "list", "data": [{"id": "/models/sse-upstream.gguf", "object": "model"}]}
    ).encode()
    replica = f"X-Openmono-Replica: {name}\r\n".encode() if name else b""
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n".encode()
        + replica
        + b"\r\n"
        + body
    )


def _head(name: str) -> bytes:
    replica = f"X-Openmono-Replica: {name}\r\n".encode() if name else b""
    return (
        b"HTTP/1.1 200 OK\r\n"
        b"Content-Type: text/event-stream\r\n"
        b"Cache-Control: no-cache\r\n"
        b"Transfer-Encoding: chunked\r\n" + replica + b"\r\n"
    )


async def _serve_connection(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    events: int,
    interval_s: float,
    head_bytes: bytes,
    slots: asyncio.Semaphore | None,
    models: bytes = b"",
) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            if length:
                await reader.readexactly(length)
            target = head.split(b" ", 2)[1:2]
            if target == [b"/health"]:
                # as llama-server's: answered at once, never waiting for a slot
                writer.write(HEALTH)
                await writer.drain()
            elif target == [b"/v1/models"] and head.startswith(b"GET "):
                writer.write(models)
                await writer.drain()
            elif slots is None:
                await _respond(writer, events, interval_s, head_bytes, length)
            else:
                async with slots:
                    await _respond(writer, events, interval_s, head_bytes, length)
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def _respond(
    writer: asyncio.StreamWriter, events: int, interval_s: float, head_bytes: bytes, prompt: int
) -> None:
    # the first token comes one interval after the request, like a prompt that takes a step
    if interval_s:
        await asyncio.sleep(interval_s)
    writer.write(head_bytes + _chunk(_event(0)))
    await writer.drain()
    for i in range(1, events):
        if interval_s:
            await asyncio.sleep(interval_s)
        writer.write(_chunk(_event(i)))
        await writer.drain()
    writer.write(_chunk(_usage(prompt, events)) + _chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")
    await writer.drain()


async def _main(
    host: str, port: int, events: int, interval_s: float, name: str, slots: int
) -> None:
    head_bytes = _head(name)
    models = _models(name)
    gate = asyncio.Semaphore(slots) if slots > 0 else None
    server = await asyncio.start_server(
        lambda r, w: _serve_connection(r, w, events, interval_s, head_bytes, gate, models),
        host,
        port,
        backlog=512,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--events", type=int, default=8)
    ap.add_argument("--interval-ms", type=float, default=0.0)
    ap.add_argument("--name", default="", help="X-Openmono-Replica header value")
    ap.add_argument("--slots", type=int, default=0, help="streams served at once (0: no limit)")
    args = ap.parse_args()
    asyncio.run(
        _main(args.host, args.port, args.events, args.interval_ms / 1000, args.name, args.slots)
    )


if __name__ == "__main__":
    main()
