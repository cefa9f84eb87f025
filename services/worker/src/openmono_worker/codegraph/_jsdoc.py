"""Names a JSDoc comment gives to code: `{@link X}` (`linkcode`, `linkplain`; `X#member` and
`X.member` name X) and the type expressions of its tags (`@param {X<T>} a`, `@returns {X}`,
`@type`, `@throws`, ...; not inside Closure's `function(...)` types, where it resolves none).
TypeScript's language server counts them as references of X (a rename
changes them), so find-references lists them, as uses in documentation: never calls, never
dependents.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_LINK = re.compile(rb"\{@link(?:code|plain)?\s+([A-Za-z_$][A-Za-z0-9_$]*)")
_TYPED_TAG = re.compile(
    rb"@(?:param|arg|argument|returns?|type|typedef|throws|exception|property|prop|this"
    rb"|yields?|enum|satisfies|implements|augments|extends)\s*\{"
)
_NAME = re.compile(rb"(?<![A-Za-z0-9_$.])[A-Za-z_$][A-Za-z0-9_$]*")
_MAX_TYPE = 400  # a brace that never closes does not swallow the comment


def _type_end(text: bytes, start: int) -> int:
    """The offset of the `}` closing the type expression opened just before `start`."""
    depth = 1
    for i in range(start, min(len(text), start + _MAX_TYPE)):
        c = text[i]
        if c == 0x7B:  # {
            depth += 1
        elif c == 0x7D:  # }
            depth -= 1
            if depth == 0:
                return i
    return -1


def mentions(comment: bytes) -> Iterator[tuple[int, str]]:
    """(offset in `comment`, name) of each name a `/** ... */` comment gives to code."""
    if not comment.startswith(b"/**"):
        return
    for m in _LINK.finditer(comment):
        yield m.start(1), m.group(1).decode()
    for tag in _TYPED_TAG.finditer(comment):
        end = _type_end(comment, tag.end())
        if end < 0:
            continue
        body = comment[tag.end() : end]
        if b"function(" in body:
            continue  # Closure's function types: TypeScript resolves no name inside them
        for name in _NAME.finditer(body):
            yield tag.end() + name.start(), name.group().decode()
