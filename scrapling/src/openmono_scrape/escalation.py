"""When the fast `fetcher` answer is not the page a reader would see, and a browser should try.

Reasons, in order: a status that anti-bot walls use (401/403/429/503; never 404/410, which are
real answers), a challenge interstitial, a JavaScript shell. A challenge is judged on the whole
page, not on one marker: an ordinary article with a reCAPTCHA comment form has plenty of text and
a normal title, so it stays on the fast path (a regex on `g-recaptcha` alone sent such pages to the
browser for 15 s, see NOTES).
"""

from __future__ import annotations

import re

from lxml import html as lxml_html

ESCALATE_STATUSES = frozenset({401, 403, 429, 503})
NEVER_ESCALATE_STATUSES = frozenset({404, 410})

# Markers that only interstitials carry (Cloudflare, DDoS-Guard, DataDome, PerimeterX, Sucuri).
_HARD_MARKERS = re.compile(
    r"cf_chl_opt|/cdn-cgi/challenge-platform/|window\._cf_chl|cf-browser-verification"
    r"|captcha-delivery\.com|px-captcha|ddos-guard|sucuri_cloudproxy_js",
    re.IGNORECASE,
)
_CHALLENGE_TITLES = re.compile(
    r"just a moment|attention required|checking your browser|verify(ing)? you are (a )?human"
    r"|are you a robot|human verification|security check|ddos-guard|captcha",
    re.IGNORECASE,
)
_CAPTCHA_WIDGETS = re.compile(
    r"g-recaptcha|h-captcha|cf-turnstile|hcaptcha\.com|recaptcha/api", re.I
)
_NEEDS_JS = re.compile(
    r"enable javascript|javascript is (required|disabled)|requires javascript"
    r"|turn on javascript|javascript must be enabled|you need to enable javascript",
    re.IGNORECASE,
)
_MOUNT_POINT = re.compile(
    r"""<div[^>]+id=["'](root|app|__next|__nuxt|svelte)["'][^>]*>\s*</div>""", re.IGNORECASE
)
THIN_TEXT_CHARS = 200
CHALLENGE_MAX_TEXT_CHARS = 1500


def visible_text(html: str) -> str:
    """The text a reader sees (no scripts, styles, noscript or templates), whitespace collapsed."""
    try:
        root = lxml_html.document_fromstring(html)
    except (ValueError, TypeError, lxml_html.etree.ParserError):
        return ""
    for bad in root.xpath("//script|//style|//noscript|//template|//head"):
        bad.drop_tree()
    return " ".join(root.text_content().split())


def _title(html: str) -> str:
    m = re.search(r"<title[^>]*>(.*?)</title>", html[:20000], re.IGNORECASE | re.DOTALL)
    return " ".join(m.group(1).split()) if m else ""


def is_challenge(html: str, text: str | None = None) -> bool:
    """A real interstitial: a hard marker, or a challenge title with a captcha and little text."""
    text = visible_text(html) if text is None else text
    if len(text) > CHALLENGE_MAX_TEXT_CHARS:
        return False
    if _HARD_MARKERS.search(html):
        return True
    return bool(_CHALLENGE_TITLES.search(_title(html)) and _CAPTCHA_WIDGETS.search(html))


def is_js_shell(html: str, text: str | None = None) -> bool:
    """Almost no text, plus a `<noscript>` asking for JavaScript or an empty app mount point."""
    text = visible_text(html) if text is None else text
    if len(text) >= THIN_TEXT_CHARS:
        return False
    noscripts = re.findall(r"<noscript[^>]*>(.*?)</noscript>", html, re.IGNORECASE | re.DOTALL)
    if any(_NEEDS_JS.search(block) for block in noscripts):
        return True
    return bool(_MOUNT_POINT.search(html) and "<script" in html.lower())


def escalation_reason(status: int, html: str | None) -> str | None:
    """Why a browser should retry this answer, or None when the fetcher's page is the page."""
    if status in NEVER_ESCALATE_STATUSES:
        return None
    if html is not None:
        # Judged before the status: a 503 interstitial is a challenge, not a busy server.
        text = visible_text(html)
        if is_challenge(html, text):
            return "challenge page"
        if is_js_shell(html, text):
            return "JavaScript shell"
    if status in ESCALATE_STATUSES:
        return f"status {status}"
    return None
