"""What a browser page does between loading and being read: Firecrawl's actions and screenshot.

`Plan` is what to do (the actions in order, the `screenshot` format's options, `waitFor`, the
bounds); `Runner` does it on one page through Scrapling's `page_action` hook, which runs after the
navigation and before the page's HTML is taken, so the document is the page after the actions.
Scrapling logs and swallows whatever that hook raises: the runner keeps the first failure and the
engine raises it after the fetch (`ActionFailed` names the action's index).

Bounds: every step waits at most `step_timeout_s` and never past the request's deadline; a
viewport is set only within the settings' caps (checked before any fetch, `firecrawl._interact`),
a full-page shot is cut at `max_full_height` (with a warning), and the screenshots and PDFs of one
answer together stay under `max_bytes` (else `TooLarge`). `executeJavascript` runs in the page's
own JavaScript world (the renderer, under Chromium's sandbox), never in this process; its value
comes back as JSON bounded by `max_js_bytes`. Every request a step causes (a click that navigates,
a script's fetch) passes the context's guard route and the egress proxy like any other.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from dataclasses import dataclass, field
from typing import Any

from openmono_contracts.firecrawl_actions import (
    ClickAction,
    ExecuteJavascriptAction,
    FirecrawlAction,
    FirecrawlActionResults,
    FirecrawlActionScrape,
    FirecrawlJavascriptReturn,
    FirecrawlScreenshotOptions,
    PdfAction,
    PressAction,
    ScrapeAction,
    ScreenshotAction,
    ScrollAction,
    WaitAction,
    WriteAction,
)

from openmono_scrape.errors import ActionFailed, FetchFailed, FetchTimeout, ScrapeError, TooLarge

# Scrapling's context opens every page at this size; a page a shot resized is put back to it.
DEFAULT_VIEWPORT = {"width": 1920, "height": 1080}
# Kept back from the deadline for reading the page after the last step.
_RESERVE_S = 0.5
_MAX_CLICKS = 100  # `click` with `all`: at most this many elements
# Firecrawl's examples name keys in capitals ("ENTER"); Playwright wants its own spelling.
_KEYS = {
    k.lower(): k
    for k in (
        "Enter", "Tab", "Escape", "Backspace", "Delete", "Space", "ArrowUp", "ArrowDown",
        "ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown", "Insert",
    )
}  # fmt: skip
_KEYS.update({"esc": "Escape", "return": "Enter", "up": "ArrowUp", "down": "ArrowDown"})
_SCROLL = """([sel, up]) => {
  const el = sel ? document.querySelector(sel) : null;
  if (sel && !el) return false;
  const by = (el ? el.clientHeight : window.innerHeight) * (up ? -1 : 1);
  (el || window).scrollBy(0, by);
  return true;
}"""
_PAGE_HEIGHT = "() => Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0)"  # noqa: E501


@dataclass(frozen=True)
class Limits:
    max_width: int
    max_height: int
    max_full_height: int
    max_bytes: int
    step_timeout_s: float
    max_js_bytes: int
    max_html_bytes: int


@dataclass
class Plan:
    """The actions, then the `screenshot` format's shot; `wait_ms` (`waitFor`) comes first."""

    actions: list[FirecrawlAction]
    screenshot: FirecrawlScreenshotOptions | None
    wait_ms: int
    settle_ms: int
    limits: Limits


@dataclass
class Interaction:
    """What the plan gave: the format's screenshot, the actions' results, warnings."""

    screenshot: str | None = None
    results: FirecrawlActionResults | None = None
    warnings: list[str] = field(default_factory=list)


def _key(name: str) -> str:
    return _KEYS.get(name.lower(), name)


def _js_type(value: Any) -> str:
    if value is None:
        return "undefined"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"


def _why(exc: BaseException) -> str:
    """Playwright's message, first line only (the rest is its call log)."""
    text = str(exc).strip().splitlines()
    first = text[0] if text else type(exc).__name__
    return first.removeprefix("Error: ")[:300]


async def _close(page: Any) -> None:
    try:
        await page.close()
    except Exception:  # closed already, or the browser went away
        return


async def prepare_page(page: Any, plan: Plan | None) -> None:
    """Before the navigation: the format's viewport, else the default one (pages are pooled, so
    a page an earlier request resized is put back)."""
    shot = plan.screenshot if plan is not None else None
    want = shot.viewport.model_dump() if shot is not None and shot.viewport else DEFAULT_VIEWPORT
    if page.viewport_size != want:
        await page.set_viewport_size(want)


class Runner:
    """Runs one plan on one page (`run` is Scrapling's `page_action`)."""

    def __init__(self, plan: Plan, deadline: float, url: str) -> None:
        self.plan = plan
        self.deadline = deadline
        self.url = url
        self.error: ScrapeError | None = None
        self.result = Interaction()
        if plan.actions:
            self.result.results = FirecrawlActionResults()
        self._bytes = 0
        self._popups: set[asyncio.Task[None]] = set()
        self._index = 0
        self._kind = "wait"

    def _left_s(self) -> float:
        left = self.deadline - time.monotonic() - _RESERVE_S
        if left <= 0:
            raise FetchTimeout(
                f"the time budget ran out before action {self._index} ({self._kind})",
                url=self.url,
                engine="browser",
            )
        return left

    def _step_ms(self) -> float:
        return min(self._left_s(), self.plan.limits.step_timeout_s) * 1000.0

    def _fail(self, why: str) -> ActionFailed:
        return ActionFailed(self._index, self._kind, why, url=self.url)

    def _popup(self, popup: Any) -> None:
        # a click on a `target=_blank` link or a `window.open`: the pool does not know such a
        # page, so it would live on until the browser is recycled (its requests pass the guard
        # all the same)
        self._popups.add(asyncio.get_running_loop().create_task(_close(popup)))

    async def run(self, page: Any) -> None:
        page.on("popup", self._popup)
        try:
            await self._run(page)
        finally:
            page.remove_listener("popup", self._popup)
            if self._popups:
                await asyncio.wait(self._popups, timeout=5)

    async def _run(self, page: Any) -> None:
        try:
            if self.plan.wait_ms:
                await asyncio.sleep(min(self.plan.wait_ms / 1000.0, self._left_s()))
            results = self.result.results
            for index, action in enumerate(self.plan.actions):
                self._index, self._kind = index, action.type
                try:
                    await self._step(page, action, results)
                except ScrapeError:
                    raise
                except Exception as exc:
                    raise self._fail(_why(exc)) from exc
            # scripts that fill the page late, before the shot and the HTML are taken
            if self.plan.settle_ms:
                await asyncio.sleep(min(self.plan.settle_ms / 1000.0, self._left_s()))
            if self.plan.screenshot is not None:
                self._index, self._kind = len(self.plan.actions), "screenshot"
                try:
                    self.result.screenshot = await self._shot(page, self.plan.screenshot)
                except ScrapeError:
                    raise
                except Exception as exc:
                    raise FetchFailed(
                        f"the screenshot could not be taken: {_why(exc)}",
                        url=self.url,
                        engine="browser",
                    ) from exc
        except ScrapeError as exc:
            self.error = exc

    async def _step(
        self, page: Any, action: FirecrawlAction, results: FirecrawlActionResults | None
    ) -> None:
        assert results is not None  # a plan with actions has results
        if isinstance(action, WaitAction):
            if action.milliseconds is not None:
                await asyncio.sleep(min(action.milliseconds / 1000.0, self._left_s()))
            else:
                await page.locator(action.selector).first.wait_for(
                    state="visible", timeout=self._step_ms()
                )
        elif isinstance(action, ClickAction):
            await self._click(page, action)
        elif isinstance(action, WriteAction):
            await page.keyboard.type(action.text)
        elif isinstance(action, PressAction):
            await page.keyboard.press(_key(action.key))
            await page.wait_for_load_state("load", timeout=self._step_ms())
        elif isinstance(action, ScrollAction):
            up = action.direction == "up"
            if not await page.evaluate(_SCROLL, [action.selector, up]):
                raise self._fail(f"no element matches {action.selector!r}")
        elif isinstance(action, ScreenshotAction):
            results.screenshots.append(await self._shot(page, action))
        elif isinstance(action, ScrapeAction):
            html = await page.content()
            if len(html.encode("utf-8")) > self.plan.limits.max_html_bytes:
                raise self._fail(f"the page's HTML is over {self.plan.limits.max_html_bytes} bytes")
            results.scrapes.append(FirecrawlActionScrape(url=page.url, html=html))
        elif isinstance(action, ExecuteJavascriptAction):
            results.javascript_returns.append(await self._script(page, action.script))
        elif isinstance(action, PdfAction):
            data = await page.pdf(
                landscape=action.landscape, scale=action.scale, format=action.format
            )
            results.pdfs.append(self._data_url(data, "application/pdf"))

    async def _click(self, page: Any, action: ClickAction) -> None:
        found = page.locator(action.selector)
        if action.all:
            count = await found.count()
            if count == 0:
                raise self._fail(f"no element matches {action.selector!r}")
            for n in range(min(count, _MAX_CLICKS)):
                await found.nth(n).click(timeout=self._step_ms())
        else:
            await found.first.click(timeout=self._step_ms())
        # a click that started a navigation: its page, loaded (or refused by the guard)
        await page.wait_for_load_state("load", timeout=self._step_ms())

    async def _script(self, page: Any, script: str) -> FirecrawlJavascriptReturn:
        # the page's own world (`isolated_context=False`): its globals, as the page sees them
        try:
            value = await page.evaluate(script, isolated_context=False)
        except Exception as exc:
            if "Illegal return statement" not in str(exc):
                raise
            # a function body (`return document.title`): it did not parse, so nothing ran yet
            body = "(async () => {\n" + script + "\n})()"
            value = await page.evaluate(body, isolated_context=False)
        size = len(json.dumps(value, default=str).encode("utf-8"))
        if size > self.plan.limits.max_js_bytes:
            raise self._fail(
                f"its return value is {size} bytes as JSON, over the limit of "
                f"{self.plan.limits.max_js_bytes}"
            )
        return FirecrawlJavascriptReturn(type=_js_type(value), value=value)

    async def _shot(self, page: Any, opts: FirecrawlScreenshotOptions) -> str:
        limits = self.plan.limits
        before = page.viewport_size
        resized = isinstance(opts, ScreenshotAction) and opts.viewport is not None
        if resized and opts.viewport is not None:
            await page.set_viewport_size(opts.viewport.model_dump())
        try:
            kind = "jpeg" if opts.quality is not None else "png"
            # one image pixel per CSS pixel: Scrapling's context renders at twice the density,
            # which would double every bound
            args: dict[str, Any] = {"type": kind, "timeout": self._step_ms(), "scale": "css"}
            if opts.quality is not None:
                args["quality"] = opts.quality
            if opts.full_page:
                args["full_page"] = True
                height = int(await page.evaluate(_PAGE_HEIGHT))
                if height > limits.max_full_height:
                    width = (page.viewport_size or DEFAULT_VIEWPORT)["width"]
                    args["clip"] = {"x": 0, "y": 0, "width": width,
                                    "height": limits.max_full_height}  # fmt: skip
                    self.result.warnings.append(
                        f"the full-page screenshot was cut at {limits.max_full_height} px "
                        f"of the page's {height}"
                    )
            data = await page.screenshot(**args)
        finally:
            if resized and before is not None:
                await page.set_viewport_size(before)
        return self._data_url(data, f"image/{kind}")

    def _data_url(self, data: bytes, mime: str) -> str:
        self._bytes += len(data)
        if self._bytes > self.plan.limits.max_bytes:
            raise TooLarge(
                f"the screenshots and PDFs of this answer are over {self.plan.limits.max_bytes} "
                "bytes (SCRAPE_SCREENSHOT_MAX_BYTES): ask for a smaller viewport, no fullPage, "
                "or a quality",
                url=self.url,
                engine="browser",
            )
        return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
