"""The `json` and `summary` formats over a page's markdown, on the box's model.

`json`: per chunk (`_chunks`), one constrained call: the schema goes to llama.cpp as
`response_format: {"type": "json_schema", ...}` (no schema, only a prompt: `json_object`), so
decoding cannot leave it; the answer is then parsed and validated again (`_schema`), and merged
over the chunks (`_chunks.merge`). An answer cut by `max_tokens` (`finish_reason: length`), not
JSON, or not valid is an error (`ModelError`): never a truncated or partial JSON.
`summary`: one plain completion per chunk, bounded by `SUMMARY_TOKENS`; several chunks' summaries
are then summarized once more.

The context: `n_ctx` (per slot) less the answer's tokens (a quarter of the context at most) less
the instructions', estimated; what is left is the chunk. Too little left: `ModelContextTooSmall`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import jsonschema_rs

from openmono_scrape.errors import ModelContextTooSmall, ModelError
from openmono_scrape.model._chunks import CHARS_PER_TOKEN, merge_all, split
from openmono_scrape.model._client import ContextOverflow, ModelClient
from openmono_scrape.model._schema import problems

SUMMARY_TOKENS = 120
# at temperature 0 the bundled 135M model loops on a summary (measured: one sentence repeated to
# max_tokens); a repeat penalty keeps it from that, json is held by its schema instead
_SUMMARY_SAMPLING = {"repeat_penalty": 1.15}
# below this the page would be read in slivers too small to say anything
MIN_CHUNK_TOKENS = 64
# what the chat template adds around the messages
_TEMPLATE_TOKENS = 32

_JSON_SYSTEM = (
    "You extract data from one web page into JSON. Use only what the page says. "
    "Answer with the JSON value only."
)
_SUMMARY_SYSTEM = (
    "You summarize web pages. Answer with a short plain-text summary of the page (at most three "
    "sentences), nothing else."
)
_COMBINE = "These are summaries of consecutive parts of one web page. Combine them into one:"


@dataclass(frozen=True)
class JsonAsk:
    """One `json` (or v1 `extract`) format: `key` is the document's field it fills."""

    key: str
    schema: dict[str, Any] | None
    validator: jsonschema_rs.Validator | None
    prompt: str | None
    system_prompt: str | None


@dataclass
class Made:
    value: Any
    warnings: list[str]


def _tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN + 1


class PageModel:
    """The model's work on one page; `n_ctx` from `ModelClient.context_tokens`."""

    def __init__(self, client: ModelClient, n_ctx: int, answer_tokens: int, max_chunks: int):
        self.client = client
        self.n_ctx = n_ctx
        self.answer_cap = max(16, min(answer_tokens, n_ctx // 4))
        self.max_chunks = max_chunks

    def _chunks(
        self, markdown: str, instructions: str, answer_tokens: int
    ) -> tuple[list[str], list[str]]:
        room = self.n_ctx - answer_tokens - _tokens(instructions) - _TEMPLATE_TOKENS
        if room < MIN_CHUNK_TOKENS:
            raise ModelContextTooSmall(
                f"the model's context ({self.n_ctx} tokens) leaves ~{max(room, 0)} tokens for "
                f"the page after the instructions (~{_tokens(instructions)}) and the answer "
                f"({answer_tokens}); {MIN_CHUNK_TOKENS} are needed: a smaller schema or prompt, "
                "or a bigger context (LLAMA_CTX_SIZE)"
            )
        chunks = split(markdown, room * CHARS_PER_TOKEN)
        warnings = []
        if len(chunks) > self.max_chunks:
            read = sum(len(c) for c in chunks[: self.max_chunks])
            warnings.append(
                f"the page is longer than {self.max_chunks} chunks of the model's context: "
                f"only its first {read} of {len(markdown)} characters were read"
            )
            chunks = chunks[: self.max_chunks]
        return chunks, warnings

    async def _each(
        self,
        chunk: str,
        build: Any,
        max_tokens: int,
        response_format: dict[str, Any] | None,
        sampling: dict[str, float] | None = None,
        depth: int = 0,
    ) -> list[tuple[str, str | None]]:
        """The answers for `chunk`, split in two when it overflows the context after all."""
        try:
            answer = await self.client.chat(build(chunk), max_tokens, response_format, sampling)
            return [(answer.text, answer.finish_reason)]
        except ContextOverflow:
            halves = split(chunk, len(chunk) // 2 + 1)
            if depth >= 2 or len(halves) < 2:
                raise ModelContextTooSmall(
                    f"a chunk of the page does not fit the model's context ({self.n_ctx} tokens) "
                    "even when split: a smaller schema or prompt, or a bigger context"
                ) from None
            out = []
            for half in halves:
                out += await self._each(
                    half, build, max_tokens, response_format, sampling, depth + 1
                )
            return out

    async def json(self, ask: JsonAsk, markdown: str, url: str) -> Made:
        schema_text = json.dumps(ask.schema, separators=(",", ":")) if ask.schema else ""
        system = ask.system_prompt or _JSON_SYSTEM
        task = ask.prompt or "Extract the data the JSON Schema describes."
        head = f"{task}\n\nJSON Schema: {schema_text}\n\n" if schema_text else f"{task}\n\n"

        def build(chunk: str) -> list[dict[str, str]]:
            page = f"Page ({url}):\n\n{chunk}"
            return [{"role": "system", "content": system}, {"role": "user", "content": head + page}]

        if ask.schema is not None:
            fmt: dict[str, Any] = {
                "type": "json_schema",
                "json_schema": {"name": "extract", "schema": ask.schema, "strict": True},
            }
        else:
            fmt = {"type": "json_object"}
        chunks, warnings = self._chunks(markdown, system + head + url, self.answer_cap)
        values: list[Any] = []
        for chunk in chunks:
            for text, finish in await self._each(chunk, build, self.answer_cap, fmt):
                values.append(self._value(ask, text, finish))
        merged = merge_all(values)
        if len(values) > 1 and not self._valid(ask, merged):
            warnings.append(
                "the answers of the page's chunks do not merge into a valid value for the "
                "schema: the first chunk's answer is given"
            )
            merged = values[0]
        return Made(merged, warnings)

    def _valid(self, ask: JsonAsk, value: Any) -> bool:
        if ask.validator is not None:
            return not problems(ask.validator, value)
        return isinstance(value, dict)

    def _value(self, ask: JsonAsk, text: str, finish: str | None) -> Any:
        if finish == "length":
            raise ModelError(
                f"the model's answer ran over {self.answer_cap} tokens: no partial JSON is "
                "given (a schema with maxLength/maxItems bounds it)"
            )
        try:
            value = json.loads(text)
        except ValueError:
            raise ModelError("the model's answer is not JSON") from None
        if ask.validator is not None:
            found = problems(ask.validator, value)
            if found:
                raise ModelError(
                    "the model's answer does not validate against the schema: " + "; ".join(found)
                )
        elif not isinstance(value, dict):
            raise ModelError("the model's answer is not a JSON object")
        return value

    async def summary(self, markdown: str, url: str) -> Made:
        tokens = min(SUMMARY_TOKENS, self.answer_cap)

        def build(chunk: str) -> list[dict[str, str]]:
            page = f"Page ({url}):\n\n{chunk}"
            return [
                {"role": "system", "content": _SUMMARY_SYSTEM},
                {"role": "user", "content": page},
            ]

        chunks, warnings = self._chunks(markdown, _SUMMARY_SYSTEM + url + _COMBINE, tokens)
        parts: list[str] = []
        for chunk in chunks:
            done = await self._each(chunk, build, tokens, None, _SUMMARY_SAMPLING)
            parts += [_bounded(t, f) for t, f in done]
        parts = [p for p in parts if p]
        if len(parts) > 1:
            joined = "\n\n".join(parts)

            def combine(text: str) -> list[dict[str, str]]:
                return [
                    {"role": "system", "content": _SUMMARY_SYSTEM},
                    {"role": "user", "content": f"{_COMBINE}\n\n{text}"},
                ]

            done = await self._each(joined, combine, tokens, None, _SUMMARY_SAMPLING)
            parts = [_bounded(t, f) for t, f in done]
            parts = [p for p in parts if p]
        if not parts:
            raise ModelError("the model gave an empty summary")
        return Made(" ".join(parts), warnings)


def _bounded(text: str, finish: str | None) -> str:
    """A summary cut by `max_tokens` ends at its last full sentence (when it has one)."""
    text = text.strip()
    if finish == "length":
        end = max(text.rfind(". "), text.rfind(".\n"))
        if end > 0:
            text = text[: end + 1]
    return text
