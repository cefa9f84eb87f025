"""Parse decoded HTML into an lxml tree that is safe to walk, and strip what a reader never sees.

Parsing never raises: garbage becomes an empty tree. Two bounds keep later recursive walks (ours
and trafilatura's) safe on hostile input: libxml2 caps nesting depth on its own, and anything
still deeper than `MAX_DEPTH` is flattened into its text.
"""

from __future__ import annotations

import html as html_lib
import re
from typing import Any

from lxml import etree
from lxml import html as lxml_html

# Deep enough for any real page, shallow enough that recursive renderers stay far from Python's
# recursion limit (each level costs a couple of frames).
MAX_DEPTH = 160

# Elements whose content is never visible text (or is chrome a reader cannot read as text).
_INVISIBLE_TAGS = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "math",
    "canvas",
    "iframe",
    "frame",
    "frameset",
    "object",
    "embed",
    "applet",
    "audio",
    "video",
    "source",
    "track",
    "map",
    "link",
    "meta",
    "base",
    "select",
    "option",
    "datalist",
    "input",
    "textarea",
    "button",
    "dialog",
)

# Below this a noscript is a "please enable JavaScript" notice or a tracking pixel.
MIN_NOSCRIPT_CHARS = 400
# A noscript whose first characters the page shows elsewhere too is a copy of them.
NOSCRIPT_PROBE_CHARS = 200

# No control's label runs this long: a `<button>` holding more text is one the parser left open
# (a menu button whose closing tag is misplaced swallows the page behind it), and a browser
# shows that text as the page.
MAX_BUTTON_CHARS = 500

# A hidden element holding more than this share of the page's text, and at least this
# many characters, is a reveal-after-load wrapper, not hidden text.
MAX_GUARD_SHARE = 0.5
MIN_GUARD_CHARS = 500
# A closed FAQ answer is an accordion panel under another name: one click on its question shows
# it (wcxb dev split: two pages gain, 0.34 and 0.19 page-F1, none loses).
_DISCLOSURE = re.compile(r"accordion|tab-?pane|tabpanel|collapse(?!d)|faq|answer", re.I)
_HIDDEN_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)", re.I)
_HIDDEN_XPATH = etree.XPath(
    # The attribute tests first: most elements have none of them, and the value tests cost more
    # (the class test apart: most elements have a class).
    "//*[@hidden or @aria-hidden or @type or @style][@hidden or @aria-hidden='true'"
    " or @type='hidden' or contains(@style, 'none') or contains(@style, 'hidden')]"
    "|//*[contains(@class, 'w-condition-invisible')]"
)
# Webflow's conditional visibility: its stylesheet hides the class (`display: none
# !important`), and a page often carries a gated or alternate copy of its article under it
# (wcxb dev split: articles 0.9460 -> 0.9464, odd ids +0.0009, even +0.00003; service +0.0001;
# 9 pages move, 8 up, one down by 0.0002; every other type level).
_HIDDEN_CLASS = re.compile(r"(?:^|\s)w-condition-invisible(?:$|\s)")

# The viewport a page's responsive rules are read at: a laptop's browser window.
DESKTOP_WIDTH = 1280
# A hidden breakpoint copy is a section of the page: smaller elements hidden at that width (a
# card's short blurb, a table cell) are kept, the wcxb truth keeping their copies as often as
# not (at 10 words a comparison table's cells went: one service page -0.02).
MIN_VARIANT_WORDS = 20
# `@media <condition> { <rules> }`, its rules one level of braces deep.
_MEDIA_BLOCK = re.compile(r"@media([^{]*)\{((?:[^{}]*\{[^{}]*\})*)[^{}]*\}", re.I)
# A rule setting one class's display: `.hidden-1rq27kw{display:none!important}`.
_DISPLAY_RULE = re.compile(r"(?:^|[},])\s*\.([\w-]+)\s*\{[^}]*?\bdisplay\s*:\s*([\w-]+)", re.I)
_WIDTH = re.compile(r"\(\s*(min|max)-width\s*:\s*([\d.]+)px\s*\)", re.I)
_WIDTH_QUERY = re.compile(
    r"^(?:\s|screen|only|all|and|\(\s*(?:min|max)-width\s*:\s*[\d.]+px\s*\))*$", re.I
)

_PARSER_KW: dict[str, Any] = {
    "remove_comments": True,
    "remove_pis": True,
    "remove_blank_text": False,
    "no_network": True,
    "recover": True,
    "default_doctype": False,
    # Lifts libxml2's nesting cap (256) so deep pages keep their text; we flatten them below.
    "huge_tree": True,
}


def _parser(encoding: str | None = None) -> Any:
    # One parser per call: lxml parsers are not safe to share between threads.
    parser = lxml_html.HTMLParser(encoding=encoding, **_PARSER_KW)
    parser.set_element_class_lookup(_LOOKUP)
    return parser


# lxml.html's own lookup is a Python method called for every element proxy made; on a page run
# it was 8% of all extraction time. This one is C-level and gives the same HtmlElement API
# (forms and inputs, which nothing here reads, get the plain element class).
_LOOKUP = etree.ElementDefaultClassLookup(
    element=lxml_html.HtmlElement,
    comment=lxml_html.HtmlComment,
    pi=lxml_html.HtmlProcessingInstruction,
    entity=lxml_html.HtmlEntity,
)


_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>", re.I)
# C0 controls (but tab, newline, carriage return) and DEL are never text a reader sees. In
# UTF-8 each is one byte that no other character's encoding contains.
_CONTROL_BYTES = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_NON_TEXT_BLOCK = re.compile(
    r"<(script|style|noscript|template|svg|textarea|select)\b.*?</\1\s*>|<!--.*?-->", re.I | re.S
)
_INLINE_TAG = re.compile(
    r"</?(?:a|b|i|u|em|strong|span|font|small|code|sub|sup|abbr)\b[^>]*>", re.I
)
_ANY_TAG = re.compile(r"<[^>]*>")


def parse_html(markup: str) -> Any | None:
    """Parse decoded markup into an `<html>` element, or None when nothing usable is there."""
    if not markup or not markup.strip():
        return None
    # The caller decoded the page: a declaration would name an encoding it no longer has.
    markup = _XML_DECL.sub("", markup, count=1)
    try:
        data = markup.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (a broken pair in the source): as a str lxml would drop the rest of
        # its paragraph; as a replacement character the text around it stays.
        data = _SURROGATE.sub("\ufffd", markup).encode("utf-8")
    # As UTF-8 bytes lxml parses a page a quarter faster than as a str, and bytes.translate
    # drops the control characters for a fraction of a regex's cost.
    data = data.translate(None, _CONTROL_BYTES)
    parser = _parser("utf-8")
    try:
        root = lxml_html.document_fromstring(data, parser=parser)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None
    if any(error.type_name == "ERR_RESOURCE_LIMIT" for error in parser.error_log):
        # libxml2 silently drops everything nested past its depth limit: keep the text instead.
        root = _text_only_tree(_CONTROL_CHARS.sub("", markup))
    if root is None or not isinstance(root.tag, str):
        return None
    _flatten_deep(root)
    return root


def _text_only_tree(markup: str) -> Any:
    """A flat document of the page's text, one paragraph per line, for pathological nesting."""
    markup = _NON_TEXT_BLOCK.sub(" ", markup)
    markup = _INLINE_TAG.sub("", markup)
    text = _CONTROL_CHARS.sub("", html_lib.unescape(_ANY_TAG.sub("\n", markup)))
    root = lxml_html.document_fromstring("<html><body></body></html>", parser=_parser())
    body = root.find("body")
    for line in text.splitlines():
        if line.strip():
            etree.SubElement(body, "p").text = line.strip()
    return root


def _flatten_deep(root: Any) -> None:
    """Replace every element nested deeper than MAX_DEPTH by its text (one C-level XPath pass)."""
    for element in root.xpath("/*" + "/*" * MAX_DEPTH):
        text = text_of(element)
        for child in list(element):
            element.remove(child)
        element.attrib.clear()
        element.tag = "div"  # a list or table holding only text would hide it from renderers
        element.text = text


def drop_element(element: Any) -> None:
    """Remove an element but keep the text that follows it (its tail belongs to the parent)."""
    parent = element.getparent()
    if parent is None:
        return
    tail = element.tail
    if tail:
        previous = element.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(element)


def remove_invisible(root: Any) -> None:
    """Drop scripts, styles, embedded objects, form controls and explicitly hidden elements.

    A `<noscript>` holding real text is kept (its tags unwrapped): script-rendered sites (forum
    software such as Discourse) ship their posts there, and a browser shows the same text. So
    is a `<button>` that swallowed the page behind it (left open), and so are closed accordion
    and tab panels, WAI-ARIA accordion regions included (a click opens them), and a hidden
    wrapper holding most of the page's text (revealed by its scripts once they ran).

    A noscript that repeats text the page shows elsewhere (an article's no-script fallback
    copy) stays out: kept, trafilatura selected a container holding both copies (wcxb dev
    split: articles 0.9456 -> 0.9460, odd ids +0.0008, even level, one page moves, up; every
    other type level; the article benchmark stays at 0.9720). The check costs one string of
    the page's text, made only on pages with a noscript of real text.

    Hidden too: what the page's own `<style>` rules hide at a desktop width in width media
    queries (`_hidden_on_desktop`: site builders ship one copy of a section per breakpoint,
    and trafilatura kept all of them). Measured on the wcxb dev split: articles 0.9464 ->
    0.9470 (odd ids +0.0012, even level), service 0.8290 -> 0.8310 (even +0.0035, odd level),
    documentation 0.9329 -> 0.9334 (even +0.0010, odd level), every other type level; four
    pages move, all up; about 0.2 ms a page (0.4% of the extraction), the `<style>` elements
    read in the walk that finds noscripts and buttons.
    """
    page_text: str | None = None
    styles: list[str] = []
    # One walk for the three tags (each `iter` is a walk of the whole tree).
    for element in list(root.iter("noscript", "button", "style")):
        if element.tag == "style":
            if element.text and "@media" in element.text:
                styles.append(element.text)
        elif element.tag == "button":
            if len(text_of(element)) > MAX_BUTTON_CHARS:
                element.tag = "div"
        else:
            text = " ".join(text_of(element).split())
            if len(text) < MIN_NOSCRIPT_CHARS:
                continue
            if page_text is None:
                page_text = " ".join(text_of(root).split())
            # A copy of text the page already shows (a no-script fallback of the article) is
            # not shown by a browser running scripts: kept, the text would be read twice.
            if page_text.count(text[:NOSCRIPT_PROBE_CHARS]) < 2:
                element.tag = "div"
    hidden = _hidden_on_desktop(root, styles)
    etree.strip_elements(root, *_INVISIBLE_TAGS, with_tail=False)
    total = len(text_of(root))
    for element in [*_HIDDEN_XPATH(root), *hidden]:
        if element.getparent() is not None and (element in hidden or _is_hidden(element)):
            size = len(text_of(element))
            if size >= MIN_GUARD_CHARS and size > MAX_GUARD_SHARE * total:
                # A wrapper hiding most of the page until its scripts ran (a guard against a
                # flash of unstyled content): a browser shows it a moment later.
                continue
            drop_element(element)


def _hidden_on_desktop(root: Any, styles: list[str]) -> set[Any]:
    """The elements the page's own stylesheets hide at a desktop width, by class.

    Only rules inside width media queries count: there a site hides the copies of a section
    laid out for the other screen sizes (each breakpoint's variant carries the whole text). A
    class hidden by a rule outside any media query is toggled by scripts (a tab, a slide).
    """
    display: dict[str, bool] = {}  # class -> hidden, the last matching rule winning
    for css in styles:
        for media in _MEDIA_BLOCK.finditer(css):
            if _matches_desktop(media.group(1)):
                for name, value in _DISPLAY_RULE.findall(media.group(2)):
                    display[name] = value.lower() == "none"
    classes = {name for name, hidden in display.items() if hidden}
    if not classes:
        return set()
    # Substring tests in C first (most classed elements are none of these), then whole names.
    test = " or ".join(f"contains(@class, '{name}')" for name in sorted(classes))
    return {
        element
        for element in root.xpath(f"descendant-or-self::body/descendant::*[{test}]")
        if not classes.isdisjoint(element.get("class", "").split())
        and len(text_of(element).split()) >= MIN_VARIANT_WORDS
    }


def _matches_desktop(condition: str) -> bool:
    """Whether a media query of widths (and `screen`) holds at `DESKTOP_WIDTH` pixels."""
    if not _WIDTH_QUERY.match(condition):
        return False
    bounds = _WIDTH.findall(condition)
    if not bounds:
        return False
    # A min-width holds up to the desktop width, a max-width from it on.
    return all((kind.lower() == "min") == (float(width) <= DESKTOP_WIDTH) for kind, width in bounds)


def _is_hidden(element: Any) -> bool:
    if element.tag in ("html", "body"):
        return False
    if _is_disclosure_panel(element):
        # Closed accordion and tab panels: one click shows them, and they hold the answers,
        # specs and sections of the page (measured on the wcxb dev split, even page ids).
        return False
    if element.get("hidden") is not None:
        return True
    if element.get("aria-hidden", "").lower() == "true" and element.tag != "a":
        # `aria-hidden` hides from assistive technology, not from the eye. On a link it marks a
        # card's second link to its story (its excerpt, its picture), which a sighted reader
        # sees (wcxb dev split: one listing page of the even half +0.52 page-F1, none other
        # moved). Elsewhere it mostly marks closed panels and icon text, so it counts as
        # hidden there (all of them kept: products -0.011, service -0.004, overall -0.0009).
        return True
    if element.get("type", "").lower() == "hidden":
        return True
    if _HIDDEN_CLASS.search(element.get("class", "")):
        return True
    return bool(_HIDDEN_STYLE.search(element.get("style", "")))


def _is_disclosure_panel(element: Any) -> bool:
    role = element.get("role")
    if role == "tabpanel" or _DISCLOSURE.search(element.get("class", "")):
        return True
    # The WAI-ARIA accordion pattern: each panel is a region labelled by the button opening it.
    return role == "region" and bool(element.get("aria-labelledby"))


class NameMatcher:
    r"""Whether a `class`/`id` string names something, one search per distinct name part.

    For patterns whose matches never span whitespace and that treat whitespace as they treat
    the string's ends (`(?:^|[\s_-])word`): then the string matches exactly when one of its
    whitespace-separated parts does. A page repeats its class names on every card, so a
    verdict per string and per part (kept for one page) spares most searches.
    """

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self._pattern = pattern
        self._names: dict[str, bool] = {}
        self._parts: dict[str, bool] = {}

    def __call__(self, names: str) -> bool:
        verdict = self._names.get(names)
        if verdict is None:
            verdict = self._names[names] = any(map(self._part, names.split()))
        return verdict

    def _part(self, part: str) -> bool:
        verdict = self._parts.get(part)
        if verdict is None:
            verdict = self._parts[part] = self._pattern.search(part) is not None
        return verdict


def body_of(root: Any) -> Any:
    """The `<body>` element (lxml always creates one for HTML documents), else the root."""
    body = root.find("body")
    return body if body is not None else root


_STRING_VALUE = etree.XPath("string()", smart_strings=False)
# The page's elements named by a class or an id, read from its root (`descendant-or-self::body/
# descendant::` is `//body//` there, at a third of the cost).
NAMED_IN_BODY = etree.XPath("descendant-or-self::body/descendant::*[@class or @id]")


def text_of(element: Any) -> str:
    """All text inside an element (plain etree elements too); XPath is ~5x faster than itertext."""
    return str(_STRING_VALUE(element))


def short_text(element: Any, max_words: int) -> str | None:
    """The element's text, whitespace collapsed, if it has at most `max_words` words, else None.

    Passes that look for short lines ask this of every block, and the text of a block high in
    the tree is most of the page: it is split only as far as the words it may have.
    """
    words = text_of(element).split(None, max_words)
    return None if len(words) > max_words else " ".join(words)
