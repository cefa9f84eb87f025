"""Code blocks kept verbatim through main-content selection.

trafilatura rewrites `<pre>` (a bare one becomes a quote, `<br>` loses the indentation after it,
highlighting spans and the language class are dropped). So before selection every `<pre>` is
swapped for a plain `<pre><code>` holding a marker and the same text (the text keeps the page's
length statistics intact), and the verbatim text and language are kept aside in a `CodeStore`.
After selection each surviving marker is turned back into the original block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

_LANG_CLASS = re.compile(
    r"(?:^|\s)(?:(?:language|lang|highlight-source|highlight)-|brush:\s*|sourceCode\s+)([\w+#.-]+)",
    re.I,
)
# Class words that look like "highlight-x" but name no language.
_NOT_LANGUAGES = {
    "highlight",
    "notranslate",
    "default",
    "none",
    "plain",
    "text",
    "plaintext",
    "hljs",
}
MARKER = re.compile(r"⟦(\d+)⟧")


@dataclass(frozen=True)
class CodeBlock:
    """A `<pre>` block as the page shows it."""

    text: str
    language: str | None


@dataclass
class CodeStore:
    """Code blocks set aside during main-content selection, by marker number."""

    blocks: list[CodeBlock] = field(default_factory=list)

    def add(self, block: CodeBlock) -> str:
        self.blocks.append(block)
        return f"⟦{len(self.blocks) - 1}⟧"

    def lookup(self, text: str | None) -> CodeBlock | None:
        match = MARKER.match((text or "").lstrip())
        if match is None:
            return None
        index = int(match.group(1))
        return self.blocks[index] if index < len(self.blocks) else None


def verbatim_text(pre: Any) -> str:
    """The text of a `<pre>` as displayed: highlighting spans flattened, `<br>` as a newline."""
    parts: list[str] = []
    _collect(pre, parts, top=True)
    text = "".join(parts)
    # HTML ignores one newline right after <pre>; trailing newlines are never visible.
    if text.startswith("\r\n"):
        text = text[2:]
    elif text.startswith("\n"):
        text = text[1:]
    return text.replace("\r\n", "\n").rstrip("\n ")


def _collect(element: Any, parts: list[str], *, top: bool = False) -> None:
    if isinstance(element.tag, str) and element.tag == "br":
        parts.append("\n")
    elif element.text and isinstance(element.tag, str):
        parts.append(element.text)
    for child in element:
        _collect(child, parts)
    if not top and element.tail:
        parts.append(element.tail)


def language_of(pre: Any) -> str | None:
    """The language named by the usual highlighter classes on the block or its wrappers."""
    candidates = [pre]
    candidates.extend(pre.iter("code"))
    parent = pre.getparent()
    for _ in range(2):
        if parent is None:
            break
        candidates.append(parent)
        parent = parent.getparent()
    for element in candidates:
        data_lang = element.get("data-lang") or element.get("data-language")
        if data_lang and _usable(data_lang):
            return str(data_lang).strip().lower()
        for match in _LANG_CLASS.finditer(element.get("class", "")):
            if _usable(match.group(1)):
                return match.group(1).lower()
    return None


def _usable(name: str) -> bool:
    name = name.strip().lower()
    return bool(name) and name not in _NOT_LANGUAGES and len(name) <= 20


def protect_code_blocks(root: Any) -> CodeStore:
    """Swap each outermost `<pre>` for a marked plain copy; return the originals."""
    store = CodeStore()
    for pre in list(root.iter("pre")):
        if any(a.tag == "pre" for a in pre.iterancestors()):
            continue
        block = CodeBlock(verbatim_text(pre), language_of(pre))
        if not block.text.strip():
            continue
        marker = store.add(block)
        tail = pre.tail
        pre.clear()
        pre.tail = tail
        code = etree.SubElement(pre, "code")
        code.text = f"{marker} {block.text}"
    return store


def restore_code_blocks(root: Any, store: CodeStore) -> None:
    """Undo `protect_code_blocks` in place (when the whole page is rendered after all)."""
    for pre in root.iter("pre"):
        block = store.lookup(pre[0].text) if len(pre) == 1 else None
        if block is None:
            continue
        tail = pre.tail
        pre.clear()
        pre.tail = tail
        code = etree.SubElement(pre, "code")
        if block.language:
            code.set("class", f"language-{block.language}")
        code.text = block.text


def strip_markers(text: str) -> str:
    """Remove a marker that survived outside a code element (its block was split apart)."""
    return MARKER.sub("", text)
