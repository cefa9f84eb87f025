"""The box's LLM as the scrape service reaches it: the gateway's LLM route (`SCRAPE_LLM_URL`),
with the gateway key (`SCRAPE_LLM_API_KEY`, else `LLAMA_API_KEY`).

Before the first model call of a request: `GET /services` (public; `"llm": false` means no model
answers on this box now) and `GET /props` (the context per slot, `n_ctx`). Every call has a
timeout: the smaller of `llm_timeout_s` and what is left of the request's budget. What can go
wrong, and what the client is told:
- no URL configured, the gateway or the model unreachable, `llm: false`, a refused key, a 5xx from
  the route: `ModelUnavailable` (503);
- a prompt over the context (llama.cpp's `exceed_context_size_error`): `ContextOverflow`, which
  the caller answers by splitting the chunk (it never reaches the client as such);
- a schema llama.cpp cannot turn into a grammar: `BadRequest` (400);
- any other refusal or a garbled answer: `ModelError` (502); the budget spent: `FetchTimeout`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import httpx
from openmono_contracts import ServicesInfo
from pydantic import ValidationError

from openmono_scrape.errors import (
    BadRequest,
    FetchTimeout,
    ModelError,
    ModelUnavailable,
)
from openmono_scrape.settings import ScrapeSettings

_CONNECT_S = 5.0
_PROBE_S = 5.0


class ContextOverflow(Exception):
    """The prompt did not fit the model's context (the caller splits the chunk)."""


@dataclass(frozen=True)
class Answer:
    text: str
    finish_reason: str | None


class ModelClient:
    """One request's talk with the model; `deadline` is a `time.monotonic()` instant."""

    def __init__(self, settings: ScrapeSettings, deadline: float) -> None:
        if not settings.llm_url:
            raise ModelUnavailable(
                "no LLM is configured for this scrape service (SCRAPE_LLM_URL is unset): "
                "the json and summary formats need the box's model"
            )
        self.base = settings.llm_url.rstrip("/")
        self.key = settings.llm_api_key.get_secret_value()
        self.call_s = settings.llm_timeout_s
        self.deadline = deadline

    def _timeout(self, cap_s: float | None = None) -> httpx.Timeout:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise FetchTimeout("the time budget ran out before the model answered")
        total = min(left, self.call_s, cap_s or self.call_s)
        return httpx.Timeout(total, connect=min(_CONNECT_S, total))

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"} if self.key else {}

    async def _send(
        self, method: str, path: str, body: Any | None = None, cap_s: float | None = None
    ) -> httpx.Response:
        timeout = self._timeout(cap_s)
        try:
            async with httpx.AsyncClient(timeout=timeout, trust_env=False) as http:
                return await http.request(
                    method, f"{self.base}{path}", json=body, headers=self._headers()
                )
        except httpx.TimeoutException:
            if time.monotonic() >= self.deadline - 0.05:
                raise FetchTimeout("the time budget ran out before the model answered") from None
            raise ModelUnavailable(f"the box's LLM did not answer {path} in time") from None
        except httpx.HTTPError as exc:
            raise ModelUnavailable(
                f"the box's LLM cannot be reached ({type(exc).__name__} on {path})"
            ) from None

    def _unavailable(self, resp: httpx.Response, path: str) -> ModelUnavailable:
        if resp.status_code in (401, 403):
            return ModelUnavailable(
                f"the gateway refused this scrape service's LLM key on {path} "
                f"(HTTP {resp.status_code}): set SCRAPE_LLM_API_KEY or LLAMA_API_KEY"
            )
        return ModelUnavailable(f"the box's LLM answered {path} with HTTP {resp.status_code}")

    async def context_tokens(self) -> int:
        """The context of one slot, after checking that the box has an LLM answering now."""
        services = await self._send("GET", "/services", cap_s=_PROBE_S)
        if services.status_code == 200:
            try:
                offered = ServicesInfo.model_validate_json(services.content, strict=True)
            except ValidationError:
                offered = None  # not the capability JSON: /props below tells
            if offered is not None and not offered.llm:
                raise ModelUnavailable(
                    "no LLM answers on this box now (the gateway's /services says llm: false)"
                )
        props = await self._send("GET", "/props", cap_s=_PROBE_S)
        if props.status_code != 200:
            raise self._unavailable(props, "/props")
        try:
            n_ctx = int(props.json()["default_generation_settings"]["n_ctx"])
        except (ValueError, KeyError, TypeError):
            raise ModelError("the box's LLM gave /props without n_ctx") from None
        if n_ctx <= 0:
            raise ModelError(f"the box's LLM reports a context of {n_ctx} tokens")
        return n_ctx

    async def chat(
        self,
        messages: list[dict[str, str]],
        max_tokens: int,
        response_format: dict[str, Any] | None = None,
        sampling: dict[str, float] | None = None,
    ) -> Answer:
        body: dict[str, Any] = {
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": 0,
            "stream": False,
            **(sampling or {}),
        }
        if response_format is not None:
            body["response_format"] = response_format
        resp = await self._send("POST", "/v1/chat/completions", body)
        if resp.status_code == 400:
            raise _refusal(resp, constrained=response_format is not None)
        if resp.status_code != 200:
            raise self._unavailable(resp, "/v1/chat/completions")
        try:
            choice = resp.json()["choices"][0]
            text = choice["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError):
            raise ModelError("the box's LLM gave an answer without a message") from None
        if not isinstance(text, str):
            raise ModelError("the box's LLM gave an answer that is not text")
        return Answer(text, choice.get("finish_reason"))


def _refusal(resp: httpx.Response, constrained: bool) -> Exception:
    try:
        error = resp.json().get("error") or {}
    except (ValueError, AttributeError):
        error = {}
    kind = str(error.get("type", "")) if isinstance(error, dict) else ""
    message = str(error.get("message", "")) if isinstance(error, dict) else ""
    if kind == "exceed_context_size_error":
        return ContextOverflow(message)
    lowered = message.lower()
    if constrained and ("schema" in lowered or "grammar" in lowered):
        why = message.splitlines()[0][:300] if message else "refused"
        return BadRequest(
            f"Bad Request: the box's model cannot be constrained to this schema: {why}",
            [{"path": ["schema"], "message": why}],
        )
    return ModelError(f"the box's LLM refused the request: {message[:300] or 'HTTP 400'}")
