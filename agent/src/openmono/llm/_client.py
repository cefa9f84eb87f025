"""`OpenAICompatModel`: streaming chat completions from llama.cpp (or any OpenAI-compatible server).

One call of `stream()`:
  1. POST `/v1/chat/completions` with `stream: true` and `stream_options.include_usage`.
  2. A 429/5xx answer or a transport failure *before the first token* is retried with exponential
     backoff (or the server's `Retry-After`), at most `max_retries` times. After the first token
     nothing is retried: the caller has already shown it, and a replay would duplicate it.
  3. 400 `exceed_context_size_error` → `ContextOverflowError`; 401/403 → `AuthError`.
  4. The body is parsed as SSE and each chunk turned into events (`TurnAssembler`); a `[DONE]` or
     a closed stream after `finish_reason` ends it, an error frame raises.
  5. Two guards: the first token must come within `first_token_timeout_s` of sending the request
     (connect and prompt processing included), and once tokens flow, a silence of
     `stall_timeout_s` (not even a keep-alive comment) aborts the stream.

It speaks the server's own tool protocol: `tools` go in the request and come back as `tool_calls`.
Another protocol (tools in the prompt, calls read from the text) wraps it (`PromptedTools`), and
may send a `grammar` (llama.cpp's per-request GBNF) as it sends anything else. `probe()` reports
what the server says of its chat template's tool support, for that wrapper to decide on.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import httpx
from openmono_contracts import gateway, trust

from openmono.config import LLMSettings
from openmono.errors import OpenMonoError
from openmono.llm._affinity import affinity_header
from openmono.llm._assemble import TurnAssembler
from openmono.llm._errors import (
    AuthError,
    FirstTokenTimeout,
    HTTPStatusError,
    LLMError,
    StallTimeout,
    StreamError,
    TransportError,
    TrustError,
)
from openmono.llm._events import StreamEvent
from openmono.llm._family import family_of, template_owner
from openmono.llm._messages import ChatMessage, ModelInfo, ToolSpec, native_tool_tokens
from openmono.llm._protocol import ToolSupport, caps_from_props
from openmono.llm._sse import SSEParser
from openmono.llm._toolprobe import probe_tool_support
from openmono.llm._wire import (
    error_message,
    error_object,
    frame_error,
    normalize_endpoint,
    overflow_error,
    parse_retry_after,
)


class _Retry(OpenMonoError):
    """Internal: this attempt failed in a way that may be retried (nothing was yielded yet)."""

    def __init__(self, error: LLMError, retry_after: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after


@dataclass
class RequestOptions:
    """Per-request extras a surface may change while a session runs (`/think`).

    `thinking`: None sends nothing (the server's default); True/False sends
    `chat_template_kwargs.enable_thinking`, which llama.cpp passes to templates that know it (Qwen3,
    DeepSeek-R1 distills, ...) and others ignore. `reasoning_effort` ("low", "medium", "high") is
    sent only with thinking on, for templates that take an effort (gpt-oss).
    """

    thinking: bool | None = None
    reasoning_effort: str | None = None

    def apply(self, body: dict[str, Any]) -> None:
        if self.thinking is None:
            return
        body["chat_template_kwargs"] = {"enable_thinking": self.thinking}
        if self.thinking and self.reasoning_effort:
            body["reasoning_effort"] = self.reasoning_effort


class OpenAICompatModel:
    """The `Model` for an OpenAI-compatible endpoint; use it as an async context manager."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        ca: str | None = None,
        insecure_http: bool = False,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        """`ca`: the gateway's trust anchor (inline PEM or a file, `openmono_contracts.trust`),
        trusted alone; `insecure_http` allows plain http:// beyond loopback."""
        self.settings = settings
        self.root = normalize_endpoint(settings.endpoint)
        try:
            trust.check_plain_http(self.root, insecure_http=insecure_http, what="the LLM")
            self._anchor = trust.load_anchor(ca)
        except trust.TrustError as exc:
            raise TrustError(str(exc)) from None
        self.info: ModelInfo | None = None
        self.options = RequestOptions()
        self._llama = False  # /props answered: a llama.cpp server, which takes a `grammar`
        self._props: dict[str, Any] | None = None
        self._client = client
        self._owns_client = client is None

    async def __aenter__(self) -> OpenAICompatModel:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._client is not None and self._owns_client:
            await self._client.aclose()
            self._client = None

    # -- public ---------------------------------------------------------------------------------

    async def list_models(self) -> list[str]:
        """The model ids `GET /v1/models` lists (what `/model NAME` can switch to)."""
        models = await self._get_json("/v1/models", allow_missing=False)
        data = (models or {}).get("data") or []
        return [str(d["id"]) for d in data if isinstance(d, dict) and d.get("id")]

    def tool_tokens(self, tools: Sequence[ToolSpec]) -> int:
        return native_tool_tokens(tools)

    async def probe(self) -> ModelInfo:
        """Model name and per-slot `n_ctx` from `GET /props`, else from `GET /v1/models`; whether
        the chat template renders tools from `/props`' `chat_template_caps`, else from a probe
        (only when `llm.tool_protocol` is `auto`: a set protocol needs no answer)."""
        info = await self._probe_model()
        support = ToolSupport(None, "unknown")
        if self._props is not None:
            support = caps_from_props(self._props)
        if support.supports_tools is None and self.settings.tool_protocol == "auto":
            support = await probe_tool_support(self._post_json, self.settings.model)
        template = (self._props or {}).get("chat_template")
        template = template if isinstance(template, str) else None
        self.info = info.model_copy(
            update={
                "supports_tools": support.supports_tools,
                "tools_known_from": None if support.source == "unknown" else support.source,
                "template_protocol": support.declared,
                "takes_grammar": self._llama,
                "family": family_of(info.model, template).describe(),
                "template": template_owner(template),
            }
        )
        return self.info

    async def _probe_model(self) -> ModelInfo:
        props = self._props = await self._get_json("/props", allow_missing=True)
        self._llama = props is not None
        if props is not None:
            gen = props.get("default_generation_settings") or {}
            model = props.get("model_alias") or props.get("model_path")
            if isinstance(model, str) and model:
                return ModelInfo(model=model, n_ctx=_pos_int(gen.get("n_ctx")), source="props")
        models = await self._get_json("/v1/models", allow_missing=False)
        data = (models or {}).get("data") or []
        if not data or not isinstance(data[0], dict) or not data[0].get("id"):
            raise HTTPStatusError(f"{self.root}/v1/models lists no model", 200, json.dumps(models))
        # An OpenAI-style server lists many models: prefer the configured one when it is there.
        wanted = [d for d in data if isinstance(d, dict) and d.get("id") == self.settings.model]
        first = wanted[0] if wanted else data[0]
        meta = first.get("meta") or {}
        n_ctx = _pos_int(
            meta.get("n_ctx") or first.get("context_length") or first.get("max_model_len")
        )
        return ModelInfo(model=str(first["id"]), n_ctx=n_ctx, source="models")

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] | None = None,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        response_format: dict[str, Any] | None = None,
        grammar: str | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Stream one assistant turn (see the module docstring for the steps)."""
        body = self._body(messages, tools, max_tokens, temperature)
        if response_format is not None:
            body["response_format"] = response_format
        if grammar is not None:
            body["grammar"] = grammar
        s = self.settings
        attempt = 0
        while True:
            asm = TurnAssembler(tools)
            try:
                # aclosing: a caller that stops early closes the attempt, hence the response.
                async with aclosing(self._attempt(body, asm)) as events:
                    async for event in events:
                        yield event
                return
            except _Retry as retry:
                if asm.started or attempt >= s.max_retries:
                    raise retry.error from None
                await asyncio.sleep(self._delay(attempt, retry.retry_after))
                attempt += 1

    # -- one attempt ----------------------------------------------------------------------------

    async def _attempt(
        self, body: dict[str, Any], asm: TurnAssembler
    ) -> AsyncGenerator[StreamEvent, None]:
        s = self.settings
        loop = asyncio.get_running_loop()
        deadline = loop.time() + s.first_token_timeout_s
        request = self._http().build_request(
            "POST",
            f"{self.root}/v1/chat/completions",
            json=body,
            headers={**self._auth(), **affinity_header(), "Accept": "text/event-stream"},
        )
        try:
            async with asyncio.timeout_at(deadline):
                response = await self._http().send(request, stream=True)
        except TimeoutError:
            raise self._first_token_timeout() from None
        except httpx.RequestError as exc:
            self._raise_if_untrusted(exc, self.root)
            raise _Retry(TransportError(f"cannot reach the LLM at {self.root}: {exc!r}")) from exc
        try:
            if response.status_code != 200:
                await self._raise_status(response, deadline)
            parser = SSEParser()
            chunks = response.aiter_bytes().__aiter__()
            finished = got_done = False
            while not finished:
                limit = loop.time() + s.stall_timeout_s if asm.started else deadline
                try:
                    async with asyncio.timeout_at(limit):
                        data = await anext(chunks)
                except StopAsyncIteration:
                    messages = parser.close()
                    finished = True
                except TimeoutError:
                    if asm.started:
                        raise StallTimeout(
                            f"the LLM stream stalled: no data for {s.stall_timeout_s:g} s",
                            s.stall_timeout_s,
                        ) from None
                    raise self._first_token_timeout() from None
                except httpx.RequestError as exc:
                    error = TransportError(f"the LLM connection broke mid-stream: {exc!r}")
                    if asm.started:
                        raise error from exc
                    raise _Retry(error) from exc
                else:
                    messages = parser.feed(data)
                for msg in messages:
                    if msg.event == "error":
                        raise frame_error(msg.data)
                    if msg.data.strip() == "[DONE]":
                        finished = got_done = True
                        break
                    for event in asm.feed(_decode(msg.data)):
                        yield event
            if asm.finish_reason is None and not got_done:
                # Closed with neither a finish_reason nor [DONE]: the answer is incomplete.
                if not asm.started:
                    raise _Retry(TransportError("the LLM closed the stream before any token"))
                raise StreamError("the LLM stream ended before the model finished its answer")
            for event in asm.finish():
                yield event
        finally:
            await response.aclose()

    async def _raise_status(self, response: httpx.Response, deadline: float) -> None:
        status = response.status_code
        try:
            async with asyncio.timeout_at(deadline):
                raw = await response.aread()
        except (TimeoutError, httpx.TransportError):
            raw = b""
        body = raw.decode("utf-8", "replace")
        err = error_object(body)
        if status == 400:
            overflow = overflow_error(err, body)
            if overflow is not None:
                raise overflow
        if status in (401, 403):
            hint = (
                "no API key is configured, but the endpoint requires one"
                if not self.settings.api_key
                else "the configured API key is not the one the server expects"
            )
            raise AuthError(
                f"the LLM endpoint {self.root} refused the request (HTTP {status}: "
                f"{error_message(body)}): {hint} (LLAMA_API_KEY / the llm api_key setting)",
                status,
            )
        error = HTTPStatusError(
            f"the LLM endpoint answered HTTP {status}: {error_message(body)}", status, body
        )
        if status == 429 or status >= 500:
            raise _Retry(error, parse_retry_after(response.headers.get("retry-after")))
        raise error

    # -- helpers --------------------------------------------------------------------------------

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            s = self.settings
            # read=None: the stream guards are ours (first-token deadline, stall limit).
            timeout = httpx.Timeout(connect=s.connect_timeout_s, read=None, write=30.0, pool=30.0)
            self._client = gateway.async_client(anchor=self._anchor, timeout=timeout)
        return self._client

    def _raise_if_untrusted(self, exc: httpx.RequestError, url: str) -> None:
        """A failed certificate check is no outage: say so at once, never retry it."""
        why = trust.explain_tls_failure(exc, url, self._anchor)
        if why is not None:
            raise TrustError(why) from exc

    def _auth(self) -> dict[str, str]:
        key = self.settings.api_key
        return gateway.bearer(key.get_secret_value() if key else None)

    def _body(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] | None,
        max_tokens: int | None,
        temperature: float | None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "messages": [m.to_wire() for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        model = self.settings.model or (self.info.model if self.info else None)
        if model:
            body["model"] = model
        if tools:
            body["tools"] = [t.to_wire() for t in tools]
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if temperature is not None:
            body["temperature"] = temperature
        self.options.apply(body)
        return body

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        s = self.settings
        if retry_after is not None:
            return min(retry_after, s.retry_after_max_s)
        backoff = min(s.backoff_max_s, s.backoff_initial_s * (2.0**attempt))
        return backoff * random.uniform(0.5, 1.0)  # noqa: S311 - jitter, not crypto

    def _first_token_timeout(self) -> FirstTokenTimeout:
        t = self.settings.first_token_timeout_s
        return FirstTokenTimeout(f"no answer from the LLM within {t:g} s (first token)", t)

    async def _post_json(self, body: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        """POST a non-streamed completion (the tool probe); (status, JSON body or None)."""
        try:
            r = await self._http().post(
                f"{self.root}/v1/chat/completions",
                json=body,
                headers=self._auth(),
                timeout=max(self.settings.probe_timeout_s, 30.0),
            )
        except httpx.RequestError:
            return 0, None
        try:
            data = r.json()
        except ValueError:
            return r.status_code, None
        return r.status_code, data if isinstance(data, dict) else None

    async def _get_json(self, path: str, *, allow_missing: bool) -> dict[str, Any] | None:
        url = f"{self.root}{path}"
        try:
            r = await self._http().get(
                url, headers=self._auth(), timeout=self.settings.probe_timeout_s
            )
        except httpx.RequestError as exc:
            self._raise_if_untrusted(exc, url)
            raise TransportError(f"cannot reach the LLM at {url}: {exc!r}") from exc
        if r.status_code in (401, 403):
            raise AuthError(
                f"the LLM endpoint refused GET {url} (HTTP {r.status_code}: "
                f"{error_message(r.text)}); check the API key (LLAMA_API_KEY / llm api_key)",
                r.status_code,
            )
        if r.status_code != 200:
            if allow_missing:
                return None
            raise HTTPStatusError(f"GET {url} answered HTTP {r.status_code}", r.status_code, r.text)
        try:
            data = r.json()
        except ValueError:
            if allow_missing:
                return None
            raise HTTPStatusError(f"GET {url} did not answer JSON", r.status_code, r.text) from None
        return data if isinstance(data, dict) else None


def _decode(data: str) -> dict[str, Any]:
    try:
        obj = json.loads(data)
    except ValueError:
        raise StreamError(f"unreadable frame in the LLM stream: {data[:200]!r}") from None
    if not isinstance(obj, dict):
        raise StreamError(f"unexpected frame in the LLM stream: {data[:200]!r}")
    return obj


def _pos_int(value: Any) -> int | None:
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None
