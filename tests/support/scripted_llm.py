"""A scripted OpenAI-compatible LLM server: real HTTP + SSE on 127.0.0.1, for client/loop tests.

It replays the assistant turns you script, one per `POST /v1/chat/completions`, and records
every request it receives. It also answers `GET /health`, `/props` and `/v1/models` like
llama.cpp does.

    from tests.support.scripted_llm import Call, ScriptedLLM, Turn

    llm = ScriptedLLM.start([
        Turn(text="Let me look."),                                   # plain answer
        Turn(tool_calls=[Call("FileRead", {"file_path": "a.py"})]),  # a native tool call
        Turn.http_error(429, retry_after=1),                         # then a rate limit...
        Turn(reasoning="hmm", text="Done."),                         # ...and the retry's answer
    ], api_key="k", n_ctx=4096)
    ...  # point the client at llm.url (the root; llm.url + "/v1" works as well)
    llm.chat_requests[0].json["messages"]  # what the client sent
    llm.stop()

In a test, the `scripted_llm` fixture (registered in tests/conftest.py) is a factory that stops
every server it started: `llm = scripted_llm([Turn(text="hi")], api_key="k")`.

A `Turn` describes one response:
  - content: `text`, `reasoning` (sent as `reasoning_content`), `tool_calls` (`Call(name,
    arguments, id=None, fragments=3)`: the arguments are streamed in `fragments` pieces, id and
    name only in the first), `finish_reason` (default "tool_calls" with calls, else "stop"),
    `usage` (default: counts plus llama.cpp-style `timings`; `None` for no usage chunk),
    `chunk_chars` (size of the text pieces), `done=False` to leave out the final `[DONE]`.
  - timing: `delay_s` before the response headers, `first_byte_delay_s` after them,
    `chunk_delay_s` between frames, `keepalive_every` (a `: keep-alive` comment every N frames).
  - failures: `Turn.http_error(status, body=None, retry_after=None)`,
    `Turn.context_overflow(n_prompt_tokens, n_ctx)`, `error_after=N` (an error frame after N data
    frames; `error_style="data"` sends `data: {"error": ...}`, `"bare"` llama.cpp's
    `error: {...}`), `stall_after=N` (silence after N frames for `stall_s`, with keep-alive
    comments every `stall_keepalive_s` if set), `drop_after=N` (cut the connection after N frames).
  - `Turn.replay(sse)`: send recorded SSE bytes verbatim, `replay_chunk_bytes` per write.
  - `Turn.completion(prompt_tokens)`: a non-streamed JSON completion with that usage (the tool
    support probe of a server without `/props`).
A turn may also be a callable `(request_json) -> Turn`, to answer depending on what was sent.
`props_json` / `models_json` replace the `/props` / `/v1/models` bodies (e.g. recorded ones);
`supports_tools=False` makes `/props` say the chat template has no tool support;
`props=False` makes `/props` a 404. With no turn left the server answers HTTP 500 (`"scripted
LLM: no turn left ..."`). With `api_key` set, every route but `/health` wants `Authorization:
Bearer <key>` (else 401, no turn consumed).
Requests are recorded in `requests` (all) and `chat_requests` (completions only).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import uvicorn

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

DEFAULT_MODEL = "/models/scripted-model.gguf"


@dataclass
class Call:
    """A native tool call to stream; `arguments` is a dict or a raw (even broken) JSON string."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None
    fragments: int = 3


@dataclass
class Turn:
    """One scripted response (see the module docstring for every knob)."""

    text: str = ""
    reasoning: str = ""
    tool_calls: Sequence[Call] = ()
    finish_reason: str | None = None
    usage: dict[str, Any] | bool | None = True
    chunk_chars: int = 8
    done: bool = True
    delay_s: float = 0.0
    first_byte_delay_s: float = 0.0
    chunk_delay_s: float = 0.0
    keepalive_every: int = 0
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    error_after: int | None = None
    error_style: str = "data"
    error: dict[str, Any] = field(
        default_factory=lambda: {"code": 500, "message": "scripted failure", "type": "server_error"}
    )
    stall_after: int | None = None
    stall_s: float = 120.0
    stall_keepalive_s: float | None = None
    drop_after: int | None = None
    raw_sse: bytes | None = None
    replay_chunk_bytes: int = 64
    # answer with `body` as plain JSON (a non-streamed completion), status 200
    plain: bool = False

    @classmethod
    def http_error(
        cls, status: int, body: Any = None, retry_after: float | str | None = None
    ) -> Turn:
        if body is None:
            body = {"error": {"code": status, "message": f"scripted HTTP {status}"}}
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        return cls(status=status, body=body, headers=headers)

    @classmethod
    def completion(cls, prompt_tokens: int, text: str = "ok") -> Turn:
        """A non-streamed completion (`stream: false`) whose usage says `prompt_tokens`."""
        body = {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 1},
        }
        return cls(body=body, plain=True)

    @classmethod
    def context_overflow(cls, n_prompt_tokens: int = 3031, n_ctx: int = 512) -> Turn:
        return cls(
            status=400,
            body={
                "error": {
                    "code": 400,
                    "message": f"request ({n_prompt_tokens} tokens) exceeds the available "
                    f"context size ({n_ctx} tokens), try increasing it",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": n_prompt_tokens,
                    "n_ctx": n_ctx,
                }
            },
        )

    @classmethod
    def replay(cls, sse: str | bytes | Path, **kw: Any) -> Turn:
        if isinstance(sse, Path):
            sse = sse.read_bytes()
        return cls(raw_sse=sse.encode() if isinstance(sse, str) else sse, **kw)


@dataclass
class RecordedRequest:
    """One request as the server saw it (header names lower-case)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


def user_texts(request: dict[str, Any]) -> list[str]:
    """The user messages of a chat request's JSON body, in order."""
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


TurnSource = Turn | Callable[[Any], Turn]


class _Drop(Exception):
    """Raised inside the app to make uvicorn abort the connection mid-response."""


class _QuietDrops(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, _Drop)


class ScriptedLLM:
    """The server; build it with `ScriptedLLM.start(turns, ...)` (or the `scripted_llm` fixture)."""

    def __init__(
        self,
        turns: Sequence[TurnSource] = (),
        *,
        api_key: str | None = None,
        model: str = DEFAULT_MODEL,
        n_ctx: int | None = 4096,
        props: bool = True,
        props_json: dict[str, Any] | None = None,
        models_json: dict[str, Any] | None = None,
        supports_tools: bool = True,
    ) -> None:
        self.turns: list[TurnSource] = list(turns)
        self.supports_tools = supports_tools
        self.api_key = api_key
        self.model = model
        self.n_ctx = n_ctx
        self.props_enabled = props
        self.props_json = props_json
        self.models_json = models_json
        self.requests: list[RecordedRequest] = []
        self.served = 0
        self.url = ""
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing: asyncio.Event | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    @classmethod
    def start(cls, turns: Sequence[TurnSource] = (), **kw: Any) -> ScriptedLLM:
        llm = cls(turns, **kw)
        llm._start()
        return llm

    def _start(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        errors = logging.getLogger("uvicorn.error")
        if not any(isinstance(f, _QuietDrops) for f in errors.filters):
            errors.addFilter(_QuietDrops())
        config = uvicorn.Config(
            self,
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            ws="none",
            http="h11",
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            self._closing = asyncio.Event()
            loop.call_soon(ready.set)
            try:
                loop.run_until_complete(self._server.serve(sockets=[sock]))  # type: ignore[union-attr]
            finally:
                loop.close()
                sock.close()

        self._thread = threading.Thread(target=run, name=f"scripted-llm-{port}", daemon=True)
        self._thread.start()
        ready.wait(10)
        deadline = time.monotonic() + 15
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("scripted LLM server did not start")
            time.sleep(0.005)

    def stop(self) -> None:
        if self._server is None:
            return
        if self._loop is not None and self._closing is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._closing.set)
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(15)
        self._server = None

    def __enter__(self) -> ScriptedLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def add(self, *turns: TurnSource) -> None:
        """Script more turns (e.g. once the test knows what the next answer should be)."""
        self.turns.extend(turns)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    # -- ASGI -----------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            msg = await receive()
            body += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        path = scope["path"]
        self.requests.append(
            RecordedRequest(scope["method"], path, headers, body, time.monotonic())
        )
        if path in ("/health", "/v1/health"):
            await _json(send, 200, {"status": "ok"})
            return
        if self.api_key and headers.get("authorization") != f"Bearer {self.api_key}":
            err = {"message": "Invalid API Key", "type": "authentication_error", "code": 401}
            await _json(send, 401, {"error": err})
            return
        if path == "/props" and self.props_enabled:
            await _json(send, 200, self._props())
        elif path == "/v1/models":
            await _json(send, 200, self._models())
        elif path.endswith("/chat/completions") and scope["method"] == "POST":
            await self._chat(body, send)
        else:
            await _json(send, 404, {"error": {"code": 404, "message": "File Not Found"}})

    def _props(self) -> dict[str, Any]:
        if self.props_json is not None:
            return self.props_json
        return {
            "default_generation_settings": {"n_ctx": self.n_ctx, "params": {}},
            "total_slots": 1,
            "model_alias": self.model,
            "model_path": self.model,
            "chat_template_caps": {
                "supports_tool_calls": self.supports_tools,
                "supports_tools": self.supports_tools,
            },
        }

    def _models(self) -> dict[str, Any]:
        if self.models_json is not None:
            return self.models_json
        return {
            "object": "list",
            "data": [
                {
                    "id": self.model,
                    "object": "model",
                    "owned_by": "llamacpp",
                    "meta": {"n_ctx": self.n_ctx} if self.n_ctx else {},
                }
            ],
        }

    async def _chat(self, body: bytes, send: Send) -> None:
        n = self.served
        if n >= len(self.turns):
            msg = f"scripted LLM: no turn left for request #{n + 1}"
            await _json(send, 500, {"error": {"code": 500, "message": msg}})
            return
        self.served += 1
        source = self.turns[n]
        turn = source if isinstance(source, Turn) else source(json.loads(body or b"{}"))
        if turn.delay_s:
            await self._pause(turn.delay_s)
        if turn.status != 200 or turn.plain:
            await _json(send, turn.status, turn.body, turn.headers)
            return
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/event-stream"),
                    (b"cache-control", b"no-cache"),
                    *[(k.encode(), v.encode()) for k, v in turn.headers.items()],
                ],
            }
        )
        if turn.first_byte_delay_s:
            await self._pause(turn.first_byte_delay_s)
        frames = _replay_frames(turn) if turn.raw_sse is not None else _frames(turn, n)
        for sent, frame in enumerate(frames):
            if turn.drop_after is not None and sent >= turn.drop_after:
                raise _Drop
            if turn.stall_after is not None and sent == turn.stall_after:
                await self._stall(turn, send)
            if turn.error_after is not None and sent == turn.error_after:
                await _body(send, _error_frame(turn))
                break
            if sent and turn.chunk_delay_s:
                await self._pause(turn.chunk_delay_s)
            if turn.keepalive_every and sent and sent % turn.keepalive_every == 0:
                await _body(send, b": keep-alive\n\n")
            await _body(send, frame)
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _pause(self, seconds: float) -> None:
        assert self._closing is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._closing.wait(), seconds)

    async def _stall(self, turn: Turn, send: Send) -> None:
        end = time.monotonic() + turn.stall_s
        step = turn.stall_keepalive_s
        while (left := end - time.monotonic()) > 0:
            assert self._closing is not None
            if self._closing.is_set():
                return
            await self._pause(min(left, step) if step else left)
            if step and time.monotonic() < end:
                await _body(send, b": keep-alive\n\n")


# -- frames -------------------------------------------------------------------------------------


def _chunk(cid: str, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "choices": [{"finish_reason": finish, "index": 0, "delta": delta}],
        "created": int(time.time()),
        "id": cid,
        "model": DEFAULT_MODEL,
        "object": "chat.completion.chunk",
    }


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _frames(turn: Turn, n: int) -> Iterator[bytes]:
    cid = f"chatcmpl-scripted-{n}"

    def data(obj: dict[str, Any]) -> bytes:
        return f"data: {json.dumps(obj, ensure_ascii=False)}\n\n".encode()

    yield data(_chunk(cid, {"role": "assistant", "content": None}))
    for piece in _pieces(turn.reasoning, turn.chunk_chars):
        yield data(_chunk(cid, {"reasoning_content": piece}))
    for piece in _pieces(turn.text, turn.chunk_chars):
        yield data(_chunk(cid, {"content": piece}))
    for i, call in enumerate(turn.tool_calls):
        args = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
        size = -(-len(args) // max(1, call.fragments)) if args else 1
        parts = _pieces(args, size) or [""]
        for j, part in enumerate(parts):
            frag: dict[str, Any] = {"index": i, "function": {"arguments": part}}
            if j == 0:
                frag["id"] = call.id or f"call_{n}_{i}"
                frag["type"] = "function"
                frag["function"] = {"name": call.name, "arguments": part}
            yield data(_chunk(cid, {"tool_calls": [frag]}))
    finish = turn.finish_reason or ("tool_calls" if turn.tool_calls else "stop")
    yield data(_chunk(cid, {}, finish))
    if turn.usage is not False and turn.usage is not None:
        completion = max(1, (len(turn.text) + len(turn.reasoning)) // 4)
        usage = (
            turn.usage
            if isinstance(turn.usage, dict)
            else {
                "completion_tokens": completion,
                "prompt_tokens": 42,
                "total_tokens": 42 + completion,
            }
        )
        last = _chunk(cid, {})
        last["choices"] = []
        last["usage"] = usage
        last["timings"] = {
            "prompt_n": usage.get("prompt_tokens", 0),
            "prompt_ms": 12.5,
            "predicted_n": usage.get("completion_tokens", 0),
            "predicted_ms": 25.0,
            "predicted_per_second": 100.0,
        }
        yield data(last)
    if turn.done:
        yield b"data: [DONE]\n\n"


def _replay_frames(turn: Turn) -> Iterator[bytes]:
    raw = turn.raw_sse or b""
    size = max(1, turn.replay_chunk_bytes)
    for i in range(0, len(raw), size):
        yield raw[i : i + size]


def _error_frame(turn: Turn) -> bytes:
    payload = json.dumps(turn.error)
    if turn.error_style == "bare":
        return f"error: {payload}\n\n".encode()
    return f"data: {json.dumps({'error': turn.error})}\n\n".encode()


async def _body(send: Send, data: bytes) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": True})


async def _json(send: Send, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
    raw = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(raw)).encode()),
                *[(k.encode(), v.encode()) for k, v in (headers or {}).items()],
            ],
        }
    )
    await send({"type": "http.response.body", "body": raw, "more_body": False})


@pytest.fixture
def scripted_llm() -> Iterator[Callable[..., ScriptedLLM]]:
    """Factory: `scripted_llm(turns, api_key=..., n_ctx=...)`; all are stopped afterwards."""
    started: list[ScriptedLLM] = []

    def factory(turns: Sequence[TurnSource] = (), **kw: Any) -> ScriptedLLM:
        llm = ScriptedLLM.start(turns, **kw)
        started.append(llm)
        return llm

    yield factory
    for llm in started:
        llm.stop()
