"""A page's markdown cut into chunks that fit the model's context, and the answers merged.

Tokens are estimated, not counted (the box's gateway gives a box key no tokenizer): one token per
`CHARS_PER_TOKEN` characters, which over-counts English and markdown for the bundled model's
tokenizer, so a chunk fits. A chunk that still overflows is split in two by the caller.

Cuts fall between paragraphs (blank lines), else between lines, else anywhere: a chunk is never
longer than its budget.

Merge rule (a page longer than one chunk, one answer per chunk, in page order): objects are merged
key by key (recursively); arrays are concatenated in page order without repeating an item equal to
one already there; for any other value the first chunk's answer wins unless it is empty (null, "",
[] or {}), then the next one's. The merged value must still validate against the schema; when it
does not (a `maxItems`, `uniqueItems` on objects, a `oneOf`), the first valid answer is used and a
warning says so.
"""

from __future__ import annotations

from typing import Any

CHARS_PER_TOKEN = 3


def split(text: str, max_chars: int) -> list[str]:
    """`text` in order, in pieces of at most `max_chars` (at least 1), cut at paragraph ends."""
    max_chars = max(1, max_chars)
    text = text.strip()
    if not text:
        return [""]
    chunks: list[str] = []
    rest = text
    while len(rest) > max_chars:
        window = rest[: max_chars + 1]
        cut = window.rfind("\n\n")
        if cut <= max_chars // 4:
            cut = window.rfind("\n")
        if cut <= max_chars // 4:
            cut = window.rfind(" ")
        if cut <= max_chars // 4:
            cut = max_chars
        piece = rest[:cut].strip()
        if piece:
            chunks.append(piece)
        rest = rest[cut:].lstrip()
    if rest:
        chunks.append(rest)
    return chunks


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def merge(first: Any, second: Any) -> Any:
    """Two chunks' answers as one (the module docstring's rule)."""
    if isinstance(first, dict) and isinstance(second, dict):
        out = dict(first)
        for key, value in second.items():
            out[key] = merge(out[key], value) if key in out else value
        return out
    if isinstance(first, list) and isinstance(second, list):
        joined = list(first)
        for item in second:
            if item not in joined:
                joined.append(item)
        return joined
    return second if _empty(first) else first


def merge_all(answers: list[Any]) -> Any:
    merged = answers[0]
    for answer in answers[1:]:
        merged = merge(merged, answer)
    return merged
