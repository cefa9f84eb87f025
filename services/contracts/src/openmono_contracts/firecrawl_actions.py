"""Firecrawl's `actions` and `screenshot` wire shapes (an external contract, camelCase).

`actions` is a list run in order on the page in a browser before it is read: `wait`
(`milliseconds` or `selector`, one of them), `click` (`selector`, `all`), `write` (`text`, typed
into what has focus), `press` (`key`), `scroll` (`direction`, `selector`), `screenshot`
(`fullPage`, `quality`, `viewport`), `scrape` (the page's URL and HTML at that point),
`executeJavascript` (`script`, run in the page) and `pdf` (`landscape`, `scale`, `format`).
Their results come back in the document's `actions` object, each list in the order of its
actions. The bounds here are Firecrawl's own (a viewport of at most 7680x4320); the service's
settings narrow them (`openmono_scrape.settings`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

PdfPaper = Literal["A0", "A1", "A2", "A3", "A4", "A5", "A6", "Letter", "Legal", "Tabloid", "Ledger"]


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class _Answer(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", serialize_by_alias=True
    )


class FirecrawlViewport(_Wire):
    width: int = Field(ge=1, le=7680)
    height: int = Field(ge=1, le=4320)


class FirecrawlScreenshotOptions(_Wire):
    """v2's `{type: "screenshot", ...}` format, and the `screenshot` action. A `quality` makes
    it a JPEG of that quality; without one it is a PNG."""

    full_page: bool = False
    quality: int | None = Field(default=None, ge=1, le=100)
    viewport: FirecrawlViewport | None = None


class WaitAction(_Wire):
    type: Literal["wait"]
    milliseconds: int | None = Field(default=None, ge=1, le=600_000)
    selector: str | None = Field(default=None, min_length=1, max_length=2000)

    @model_validator(mode="after")
    def _one_of(self) -> WaitAction:
        if (self.milliseconds is None) == (self.selector is None):
            raise ValueError("either 'milliseconds' or 'selector' must be given, not both")
        return self


class ClickAction(_Wire):
    type: Literal["click"]
    selector: str = Field(min_length=1, max_length=2000)
    all: bool = False


class WriteAction(_Wire):
    type: Literal["write"]
    text: str = Field(max_length=10_000)


class PressAction(_Wire):
    type: Literal["press"]
    key: str = Field(min_length=1, max_length=64)


class ScrollAction(_Wire):
    type: Literal["scroll"]
    direction: Literal["up", "down"] = "down"
    selector: str | None = Field(default=None, min_length=1, max_length=2000)


class ScreenshotAction(FirecrawlScreenshotOptions):
    type: Literal["screenshot"]


class ScrapeAction(_Wire):
    type: Literal["scrape"]


class ExecuteJavascriptAction(_Wire):
    type: Literal["executeJavascript"]
    script: str = Field(min_length=1, max_length=100_000)


class PdfAction(_Wire):
    type: Literal["pdf"]
    landscape: bool = False
    scale: float = Field(default=1.0, ge=0.1, le=2.0)
    format: PdfPaper = "Letter"


FirecrawlAction = Annotated[
    WaitAction
    | ClickAction
    | WriteAction
    | PressAction
    | ScrollAction
    | ScreenshotAction
    | ScrapeAction
    | ExecuteJavascriptAction
    | PdfAction,
    Field(discriminator="type"),
]


class FirecrawlActionScrape(_Answer):
    url: str
    html: str


class FirecrawlJavascriptReturn(_Answer):
    # JavaScript's `typeof` of the value ("undefined" also stands for null)
    type: str
    value: Any = None


class FirecrawlActionResults(_Answer):
    """`data.actions`: present when the request had actions; every list, in action order."""

    screenshots: list[str] = Field(default_factory=list)
    scrapes: list[FirecrawlActionScrape] = Field(default_factory=list)
    javascript_returns: list[FirecrawlJavascriptReturn] = Field(default_factory=list)
    pdfs: list[str] = Field(default_factory=list)
