"""WebSearch: search the web through the gateway's SearXNG, or DuckDuckGo when that is not there.

The first line of the output says which path answered and why (`via gateway` / `via fallback`),
so the model and the user can tell a gateway result from a fallback one. A fallback that meets a
bot challenge reports "search degraded" as an error: results may exist, we could not get them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from openmono_worker.errors import ToolError
from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome
from openmono_worker.web import (
    SearchAnswer,
    SearchDegraded,
    run_cancellable,
    web_search,
)


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=500, description="What to search for.")
    max_results: int = Field(
        default=8, ge=1, le=20, description="How many results to return (default 8)."
    )


def _header(answer: SearchAnswer) -> str:
    if answer.path == "gateway":
        return f"[WebSearch via gateway: {answer.source}]"
    return f"[WebSearch via fallback: {answer.source}; gateway not used: {answer.reason}]"


def render(query: str, answer: SearchAnswer) -> str:
    """The answer as the model reads it."""
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
        "Search the web. Returns titles, URLs and snippets; read a result with WebFetch. "
        "Uses the inference box's SearXNG when it offers one, otherwise DuckDuckGo."
    )
    read_only = True
    concurrency_safe = True
    kind = "search"
    params_model = Params

    def execute(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        settings = ctx.settings.web
        answer = run_cancellable(
            lambda: web_search(params.query, params.max_results, ctx.web, settings, ctx.timeout_s),
            ctx.cancel,
        )
        if answer.failure is not None:
            what = "degraded" if isinstance(answer.failure, SearchDegraded) else "failed"
            raise ToolError(
                f"{_header(answer)}\nWeb search {what}: {answer.failure.reason}. "
                "This does not mean nothing exists: no search engine could be asked. "
                "Try again later or fetch a known URL with WebFetch."
            )
        return ToolOutcome(render(params.query, answer))


TOOL = WebSearch()
