"""SearXNG's JSON search answer (docs/architecture.md §5) and the one way to read it, for every
caller.

`SearxngAnswer` is the answer of `GET /search?q=..&format=json` as SearXNG sends it; `read_answer`
checks the envelope and reads it, skipping rows it cannot use rather than failing the search;
`normalise` turns it into a `SearchPage`. The agent's WebSearch (through the gateway) and the
scrape service's Firecrawl search both use these two, so both see the same hits.

The rules:
- SearXNG's order is kept (it is sorted by score already).
- A row is a hit only with an `http://` or `https://` URL: typed results (key/value tables,
  infoboxes) have `url: null`, and a search result is only worth showing if it can be fetched.
- Repeated URLs are dropped, the first (best-scored) wins. Two URLs are the same page when they
  differ only in the fragment, a trailing slash or the case of the scheme and host (a path is
  case-sensitive, so its case counts).
- Text is whitespace-folded; a hit without a title is titled by its URL.
- `number_of_results` is accepted, never required (newer SearXNG versions dropped it).
- Of `unresponsive_engines` (`[[name, message], ...]`) only the names are kept: the messages are
  translated into the instance's language.
- An answer with no hits while engines failed is `broken`: a failed search, not an absence of
  results (each caller answers that as its own error).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urldefrag

from pydantic import BaseModel, ConfigDict, Field, field_validator

from openmono_contracts.errors import ContractError

__all__ = [
    "SearchHit",
    "SearchPage",
    "SearxngAnswer",
    "SearxngError",
    "SearxngRow",
    "dedupe_key",
    "normalise",
    "read_answer",
]


class SearxngError(ContractError):
    """The body is not a SearXNG search answer (not an object, an error body, no results list)."""


def _fold(value: Any) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


class SearxngRow(BaseModel):
    """One row of `results`; fields of other types than SearXNG's are read as absent."""

    model_config = ConfigDict(extra="ignore")

    url: str | None = None
    title: str = ""
    content: str = ""
    engine: str | None = None
    engines: list[str] = Field(default_factory=list)

    @field_validator("url", "engine", mode="before")
    @classmethod
    def _optional_text(cls, value: Any) -> str | None:
        return value.strip() or None if isinstance(value, str) else None

    @field_validator("title", "content", mode="before")
    @classmethod
    def _text(cls, value: Any) -> str:
        return _fold(value)

    @field_validator("engines", mode="before")
    @classmethod
    def _names(cls, value: Any) -> list[str]:
        return [e for e in value if isinstance(e, str) and e] if isinstance(value, list) else []


class SearxngAnswer(BaseModel):
    """The JSON answer of SearXNG's search (the keys we read; the others are ignored)."""

    model_config = ConfigDict(extra="ignore")

    query: str = ""
    results: list[SearxngRow]
    answers: list[str] = Field(default_factory=list)
    suggestions: list[str] = Field(default_factory=list)
    unresponsive_engines: list[str] = Field(default_factory=list)
    number_of_results: float | None = None

    @field_validator("results", mode="before")
    @classmethod
    def _rows(cls, value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise ValueError("results is not a list")
        return [row for row in value if isinstance(row, dict)]

    @field_validator("answers", "suggestions", mode="before")
    @classmethod
    def _strings(cls, value: Any) -> list[str]:
        out: list[str] = []
        for item in value if isinstance(value, list) else []:
            text = _fold(item)
            if not text and isinstance(item, dict):
                text = _fold(item.get("answer") or item.get("content") or "")
            if text:
                out.append(text)
        return out

    @field_validator("unresponsive_engines", mode="before")
    @classmethod
    def _engine_names(cls, value: Any) -> list[str]:
        names: list[str] = []
        for row in value if isinstance(value, list) else []:
            name = row[0] if isinstance(row, list | tuple) and row else row
            if isinstance(name, str) and name and name not in names:
                names.append(name)
        return names

    @field_validator("query", mode="before")
    @classmethod
    def _query(cls, value: Any) -> str:
        return value if isinstance(value, str) else ""

    @field_validator("number_of_results", mode="before")
    @classmethod
    def _count(cls, value: Any) -> float | None:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return float(value) if ok else None


class SearchHit(BaseModel):
    """One result: where it points and what the engine said about it."""

    model_config = ConfigDict(frozen=True)

    title: str
    url: str
    snippet: str = ""
    engines: tuple[str, ...] = ()


class SearchPage(BaseModel):
    """A normalised answer: hits in rank order, plus what the engines said besides."""

    hits: list[SearchHit]
    unresponsive_engines: list[str] = Field(default_factory=list)
    suggestions: list[str] = Field(default_factory=list)
    answers: list[str] = Field(default_factory=list)

    @property
    def broken(self) -> bool:
        """No hits because engines failed: a failed search, not an empty one."""
        return not self.hits and bool(self.unresponsive_engines)


def dedupe_key(url: str) -> str:
    """Which page `url` names: no fragment, no trailing slash, scheme and host lower-cased."""
    bare, _ = urldefrag(url.strip())
    scheme, sep, rest = bare.partition("://")
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}{sep}{host.lower()}{slash}{path}".rstrip("/")


def read_answer(body: Any) -> SearxngAnswer:
    """`body` (parsed JSON) as a SearXNG answer; `SearxngError` when it is not one."""
    if not isinstance(body, dict):
        raise SearxngError("SearXNG answered JSON that is not an object")
    if "error" in body and "results" not in body:
        raise SearxngError(f"SearXNG answered an error: {_fold(str(body['error']))[:200]}")
    if not isinstance(body.get("results"), list):
        raise SearxngError("SearXNG's answer has no results list")
    return SearxngAnswer.model_validate(body)


def normalise(body: Any, max_results: int | None = None) -> SearchPage:
    """A SearXNG answer (parsed JSON, or already read) as a `SearchPage` (see the rules above)."""
    answer = body if isinstance(body, SearxngAnswer) else read_answer(body)
    hits: list[SearchHit] = []
    seen: set[str] = set()
    for row in answer.results:
        if max_results is not None and len(hits) >= max_results:
            break
        url = row.url
        if url is None or not url.lower().startswith(("http://", "https://")):
            continue
        key = dedupe_key(url)
        if key in seen:
            continue
        seen.add(key)
        engines = tuple(row.engines) or ((row.engine,) if row.engine else ())
        hits.append(
            SearchHit(title=row.title or url, url=url, snippet=row.content, engines=engines)
        )
    return SearchPage(
        hits=hits,
        unresponsive_engines=answer.unresponsive_engines,
        suggestions=answer.suggestions,
        answers=answer.answers,
    )
