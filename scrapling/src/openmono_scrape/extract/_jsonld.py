"""Product facts a page states in JSON-LD but does not show in the part selected as content.

Shops often render the description or the spec sheet in tabs filled by script, or not at all,
while the page's JSON-LD `Product` carries them. When the selected content lacks the product's
name, its description or its `additionalProperty` specs, they are added from there: name as
the first heading (unless the selection has a top heading of its own), description as
paragraphs, specs as a list. "Lacks" means most of the words are missing, so a description
already shown is never doubled.
"""

from __future__ import annotations

import html
import re
from typing import Any

from lxml import etree

from ._dom import text_of
from ._pagetype import types_of

_WORD = re.compile(r"\w+")
_TAG = re.compile(r"<[^>]+>")
# Below this share of its words already present, a JSON-LD text counts as missing.
MIN_PRESENT_SHARE = 0.6
MAX_SPECS = 50


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _plain(value: Any) -> str:
    if not isinstance(value, str):
        return ""
    return " ".join(html.unescape(_TAG.sub(" ", value)).split())


def _missing(text: str, present: set[str]) -> bool:
    words = _words(text)
    return bool(words) and len(words & present) / len(words) < MIN_PRESENT_SHARE


def add_product_facts(body: Any, items: list[dict[str, Any]]) -> None:
    """Add the first JSON-LD `Product`'s missing name, description and specs to `body`."""
    product = next((item for item in items if "Product" in types_of(item)), None)
    if product is None:
        return
    present = _words(text_of(body))
    name = _plain(product.get("name"))
    # A selection with its own top heading already names the product; the JSON-LD name is then
    # often a longer listing title (brand, variant, materials), which the page does not show.
    if name and _missing(name, present) and body.find(".//h1") is None:
        heading = etree.Element("h1")
        heading.text = name
        body.insert(0, heading)
    description = _plain(product.get("description"))
    if description and _missing(description, present):
        paragraph = etree.SubElement(body, "p")
        paragraph.text = description
    specs = _specs(product.get("additionalProperty"))
    missing = [line for line in specs if _missing(line, present)]
    if missing:
        listing = etree.SubElement(body, "ul")
        for line in missing[:MAX_SPECS]:
            etree.SubElement(listing, "li").text = line


def _specs(value: Any) -> list[str]:
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return []
    lines = []
    for spec in value:
        if not isinstance(spec, dict):
            continue
        name, text = _plain(spec.get("name")), _plain(spec.get("value"))
        if name and text:
            lines.append(f"{name}: {text}")
    return lines
