"""When the fast fetcher's answer sends the URL to a browser (openmono_scrape.escalation)."""

from __future__ import annotations

import pytest
from openmono_scrape.escalation import escalation_reason, is_challenge, is_js_shell, visible_text

from tests.support import fixture_web as fw


@pytest.mark.parametrize("status", [401, 403, 429, 503])
def test_blocking_statuses_escalate(status: int) -> None:
    assert escalation_reason(status, fw.page("Error", "<p>" + "denied " * 100 + "</p>")) == (
        f"status {status}"
    )


@pytest.mark.parametrize("status", [404, 410])
def test_gone_and_missing_never_escalate(status: int) -> None:
    # Even a challenge-looking body: the site answered, the page does not exist.
    assert escalation_reason(status, fw.challenge_page(clears=False)) is None
    assert escalation_reason(status, fw.js_only_page()) is None


def test_ordinary_pages_stay() -> None:
    assert escalation_reason(200, fw.article_page()) is None
    assert escalation_reason(200, fw.code_page()) is None
    assert escalation_reason(200, None) is None  # JSON, text: nothing to judge
    assert escalation_reason(500, fw.article_page()) is None


def test_recaptcha_comment_form_is_not_a_challenge() -> None:
    html = fw.recaptcha_page()
    assert "g-recaptcha" in html
    assert not is_challenge(html)
    assert escalation_reason(200, html) is None


def test_cloudflare_interstitial_is_a_challenge_whatever_its_status() -> None:
    html = fw.challenge_page(clears=False)
    assert is_challenge(html)
    assert escalation_reason(200, html) == "challenge page"
    assert escalation_reason(503, html) == "challenge page"


def test_captcha_interstitial_needs_title_widget_and_little_text() -> None:
    wall = fw.page(
        "Human verification", '<p>Please confirm.</p><div class="h-captcha" data-sitekey="x"></div>'
    )
    assert is_challenge(wall)
    long_page = fw.page(
        "Human verification research", "<p>" + "words " * 400 + '</p><div class="h-captcha"></div>'
    )
    assert not is_challenge(long_page)
    no_widget = fw.page("Security check", "<p>Our security check policy.</p>")
    assert not is_challenge(no_widget)


def test_js_shell_detection() -> None:
    assert is_js_shell(fw.js_only_page())
    assert escalation_reason(200, fw.js_only_page()) == "JavaScript shell"
    mount = fw.page("App", '<div id="__next"></div><script src="/app.js"></script>')
    assert is_js_shell(mount)
    # Short but honest page without a JavaScript hint: not a shell.
    assert not is_js_shell(fw.page("Hi", "<p>Closed on Sundays.</p>"))
    # A full article that also has a noscript notice is not a shell.
    article = fw.article_page().replace(
        "</body>", "<noscript>Please enable JavaScript for comments.</noscript></body>"
    )
    assert not is_js_shell(article)


def test_visible_text_skips_scripts_and_styles() -> None:
    html = fw.page("T", "<style>p{}</style><p>seen</p><script>var unseen=1</script>")
    assert visible_text(html) == "seen"
    assert visible_text("") == ""
