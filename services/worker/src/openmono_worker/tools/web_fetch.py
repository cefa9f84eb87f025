"""WebFetch: one page as markdown, through the gateway's scrape service or fetched directly.

The direct fetch (the fallback) uses the same SSRF guard as the scrape service, so neither path
reaches loopback, private or metadata addresses. The first line of the output says which path
answered and why. The page's own words (title and text) come inside an
`<untrusted-page-content>` block (`wrap_untrusted`), so a page cannot pose as instructions.
"""

from __future__ import annotations

from openmono_contracts import ScrapeRequest
from pydantic import BaseModel, ConfigDict, Field

from openmono_worker.errors import ToolError
from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome
from openmono_worker.web import (
    FallbackError,
    FetchedPage,
    run_cancellable,
    web_fetch,
    wrap_page,
)

DEFAULT_MAX_LENGTH = 50_000


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(
        min_length=1, max_length=8192, description="The http(s) URL of the page to read."
    )
    max_length: int = Field(
        default=DEFAULT_MAX_LENGTH,
        ge=100,
        le=1_000_000,
        description=f"Cut the text after this many characters (default {DEFAULT_MAX_LENGTH}).",
    )
    render: bool = Field(
        default=False, description="Run the page's JavaScript in a browser first (slower)."
    )
    headless: bool = Field(default=True, description="Run that browser without a window.")


def render_page(page: FetchedPage) -> str:
    """The page as the model reads it."""
    if page.path == "gateway":
        head = f"[WebFetch via gateway: {page.source}"
    else:
        head = f"[WebFetch via fallback: {page.source}; gateway not used: {page.reason}"
    extra = "".join(f"; {note}" for note in page.notes)
    lines = [f"{head}{extra}]", f"URL: {page.url}", f"Status: {page.status}"]
    lines += ["", wrap_page(page.title, page.content, page.url)]
    if page.truncated:
        lines += ["", "[cut at max_length; ask for more with a larger max_length]"]
    return "\n".join(lines)


class WebFetch(Tool[Params]):
    name = "WebFetch"
    description = (
        "Fetch a web page and return its main content as markdown. Uses the inference box's "
        "scrape service when it offers one (render=true runs a browser), otherwise fetches "
        "the page directly. Private and local addresses are refused."
    )
    read_only = True
    concurrency_safe = True
    permission = "ask"  # read-only, but it sends what the model chooses to any site
    kind = "fetch"
    web = True
    params_model = Params

    def execute(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        settings = ctx.settings.web
        request = ScrapeRequest(
            url=params.url,
            render=params.render,
            headless=params.headless,
            max_length=params.max_length,
        )
        try:
            page = run_cancellable(
                lambda: web_fetch(request, ctx.web, settings, ctx.timeout_s), ctx.cancel
            )
        except FallbackError as exc:
            raise ToolError(f"WebFetch could not get {params.url}: {exc.reason}") from exc
        return ToolOutcome(render_page(page), truncated=page.truncated)


TOOL = WebFetch()
