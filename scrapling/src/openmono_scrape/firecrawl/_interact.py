"""Firecrawl's `screenshot` format and `actions` as the browser's plan (`engines.interact`).

Checked before any fetch, each refusal a 400 naming what and the limit: a request that cannot
use the browser (no Chromium here), more actions than `actions_max`, a viewport over the
settings' caps, waits (`waitFor` and `wait` actions) longer than the request's budget; and on
every endpoint but scrape (a crawl, batch or search would run them on every page). Formats:
`screenshot` (the viewport), `screenshot@fullPage` (v1: the whole page) and v2's
`{type: "screenshot", fullPage, quality, viewport}`.
"""

from __future__ import annotations

from typing import Any

from openmono_contracts.firecrawl import FirecrawlDocument, FirecrawlScrapeOptions
from openmono_contracts.firecrawl_actions import (
    FirecrawlScreenshotOptions,
    FirecrawlViewport,
    ScreenshotAction,
    WaitAction,
)
from pydantic import ValidationError

from openmono_scrape.engines.interact import Interaction, Limits, Plan
from openmono_scrape.errors import BadRequest
from openmono_scrape.firecrawl._document import SHOT_FORMATS
from openmono_scrape.settings import ScrapeSettings


def _bad(where: str, message: str) -> BadRequest:
    return BadRequest(f"Bad Request: {where}: {message}", [{"path": where.split("."),
                                                            "message": message}])  # fmt: skip


def screenshot_options(raw: list[str | dict[str, Any]]) -> FirecrawlScreenshotOptions | None:
    """The screenshot format's options, None when it was not asked."""
    for i, item in enumerate(raw):
        name = item.get("type") if isinstance(item, dict) else item
        if name == "screenshot@fullPage":
            return FirecrawlScreenshotOptions(full_page=True)
        if name != "screenshot":
            continue
        if not isinstance(item, dict):
            return FirecrawlScreenshotOptions()
        try:
            return FirecrawlScreenshotOptions.model_validate(item)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in ("formats", i, *first["loc"]))
            raise _bad(where, first["msg"]) from None
    return None


def refuse_off_scrape(opts: FirecrawlScrapeOptions) -> None:
    """Actions anywhere but scrape: 400 (the formats are refused by `parse_formats`)."""
    if opts.actions:
        raise BadRequest(
            "Bad Request: actions run on scrape only here (a crawl, batch or search would run "
            "them on every page)"
        )


def _check_viewport(viewport: FirecrawlViewport | None, where: str, cfg: ScrapeSettings) -> None:
    if viewport is None:
        return
    if viewport.width > cfg.screenshot_max_width:
        raise _bad(f"{where}.viewport.width", f"at most {cfg.screenshot_max_width} px here")
    if viewport.height > cfg.screenshot_max_height:
        raise _bad(f"{where}.viewport.height", f"at most {cfg.screenshot_max_height} px here")


def plan_for(
    opts: FirecrawlScrapeOptions, cfg: ScrapeSettings, has_browser: bool, budget_s: float
) -> Plan | None:
    """The browser's plan for a scrape, None when it asks for neither screenshot nor actions."""
    shot = screenshot_options(opts.formats)
    actions = list(opts.actions or [])
    if shot is None and not actions:
        return None
    if not has_browser:
        raise BadRequest(
            "Bad Request: actions and the screenshot format need the browser engine, and no "
            "Chromium is installed here"
        )
    if len(actions) > cfg.actions_max:
        raise _bad("actions", f"at most {cfg.actions_max} actions here, got {len(actions)}")
    if shot is not None:
        where = next(
            f"formats.{i}"
            for i, item in enumerate(opts.formats)
            if (item.get("type") if isinstance(item, dict) else item) in SHOT_FORMATS
        )
        _check_viewport(shot.viewport, where, cfg)
    waits_ms = opts.wait_for
    for i, action in enumerate(actions):
        if isinstance(action, ScreenshotAction):
            _check_viewport(action.viewport, f"actions.{i}", cfg)
        elif isinstance(action, WaitAction) and action.milliseconds is not None:
            waits_ms += action.milliseconds
    if waits_ms >= budget_s * 1000.0:
        raise _bad(
            "actions",
            f"waitFor and the wait actions add up to {waits_ms} ms, which does not fit the "
            f"request's timeout of {budget_s * 1000.0:g} ms",
        )
    limits = Limits(
        max_width=cfg.screenshot_max_width,
        max_height=cfg.screenshot_max_height,
        max_full_height=cfg.screenshot_max_full_page_height,
        max_bytes=cfg.screenshot_max_bytes,
        step_timeout_s=cfg.actions_step_timeout_s,
        max_js_bytes=cfg.actions_max_js_return_bytes,
        max_html_bytes=cfg.max_download_bytes,
    )
    return Plan(actions, shot, opts.wait_for, cfg.browser_settle_ms, limits)


def fill(doc: FirecrawlDocument, got: Interaction | None) -> list[str]:
    """The screenshot and the actions' results into `doc`; the warnings they gave."""
    if got is None:
        return []
    doc.screenshot = got.screenshot
    doc.actions = got.results
    return list(got.warnings)
