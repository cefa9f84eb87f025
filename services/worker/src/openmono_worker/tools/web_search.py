"""WebSearch: search the web through the gateway's SearXNG, or DuckDuckGo when the user allows it.

It runs without asking, so the public fallback (the query straight to DuckDuckGo, the hits read
straight from their sites) is opt-in (`web.public_fallback`, off by default): without it, a
search the gateway cannot serve sends nothing and the error says how to turn the fallback on.

The first line of the output says which path answered and why (`via gateway` / `via fallback`),
so the model and the user can tell a gateway result from a fallback one. A fallback that meets a
bot challenge reports "search degraded" as an error: results may exist, we could not get them.

`read_top: k` (at most 5) also reads the first k results in the same call, in parallel and on
WebFetch's path (scrape service, else the direct fetch, chosen per page), each cut to
`read_max_length` characters: one round trip for the model instead of a search and k fetches.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from openmono_worker.errors import ToolError
from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome
from openmono_worker.web import (
    FallbackOff,
    PageRead,
    SearchAnswer,
    SearchDegraded,
    run_cancellable,
    search_and_read,
    wrap_page,
)

MAX_READ_TOP = 5
DEFAULT_READ_MAX_LENGTH = 4000


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=500, description="What to search for.")
    max_results: int = Field(
        default=8, ge=1, le=20, description="How many results to return (default 8)."
    )
    read_top: int = Field(
        default=0,
        ge=0,
        le=MAX_READ_TOP,
        description=(
            f"Also read the first N results (0-{MAX_READ_TOP}) in this call, as WebFetch would, "
            "and include their text. Saves separate WebFetch calls. Default 0."
        ),
    )
    read_max_length: int = Field(
        default=DEFAULT_READ_MAX_LENGTH,
        ge=200,
        le=50_000,
        description=(
            f"Cut each read result's text after this many characters "
            f"(default {DEFAULT_READ_MAX_LENGTH})."
        ),
    )


def _header(answer: SearchAnswer) -> str:
    if answer.path == "gateway":
        return f"[WebSearch via gateway: {answer.source}]"
    return f"[WebSearch via fallback: {answer.source}; gateway not used: {answer.reason}]"


def _read_lines(read: PageRead) -> list[str]:
    page = read.page
    if page is None:
        return [f"   [not read: {read.error}]"]
    via = "gateway" if page.path == "gateway" else "fallback (direct fetch)"
    cut = "; cut at read_max_length" if page.truncated else ""
    head = f"   [read via {via}; status {page.status}{cut}]"
    # The same block WebFetch uses: a page read here can no more pose as instructions than there.
    return [head, "", wrap_page(page.title, page.content, page.url)]


def render(query: str, answer: SearchAnswer, reads: list[PageRead] | None = None) -> str:
    """The answer as the model reads it (with the text of the hits read, when any were)."""
    by_url = {r.url: r for r in reads or ()}
    page = answer.page
    lines = [_header(answer)]
    if page is None:
        return "\n".join(lines)
    if not page.hits:
        lines.append(f'No results for "{query}".')
    else:
        lines.append(f'{len(page.hits)} results for "{query}":')
    for i, hit in enumerate(page.hits, 1):
        lines.append("")
        lines.append(f"{i}. {hit.title}")
        lines.append(f"   {hit.url}")
        if hit.snippet:
            lines.append(f"   {hit.snippet}")
        read = by_url.get(hit.url)
        if read is not None:
            lines += _read_lines(read)
    if page.answers:
        lines += ["", "Answers: " + " | ".join(page.answers)]
    if page.suggestions:
        lines += ["", "Related searches: " + ", ".join(page.suggestions)]
    if page.unresponsive_engines:
        lines += ["", "Engines that did not answer: " + ", ".join(page.unresponsive_engines)]
    return "\n".join(lines)


class WebSearch(Tool[Params]):
    name = "WebSearch"
    description = (
        "Search the web. Returns titles, URLs and snippets; read_top=N also returns the text "
        "of the first N results (read in parallel), else read a result with WebFetch. "
        "Uses the inference box's SearXNG; DuckDuckGo only where the user allowed it."
    )
    read_only = True
    concurrency_safe = True
    kind = "search"
    web = True
    params_model = Params

    def execute(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        settings = ctx.settings.web
        answer, reads = run_cancellable(
            lambda: search_and_read(
                params.query,
                params.max_results,
                params.read_top,
                params.read_max_length,
                ctx.web,
                settings,
                ctx.timeout_s,
            ),
            ctx.cancel,
        )
        if isinstance(answer.failure, FallbackOff):
            raise ToolError(f"[WebSearch: nothing was searched]\n{answer.failure.reason}.")
        if answer.failure is not None:
            what = "degraded" if isinstance(answer.failure, SearchDegraded) else "failed"
            raise ToolError(
                f"{_header(answer)}\nWeb search {what}: {answer.failure.reason}. "
                "This does not mean nothing exists: no search engine could be asked. "
                "Try again later or fetch a known URL with WebFetch."
            )
        return ToolOutcome(render(params.query, answer, reads))


TOOL = WebSearch()
