"""Turn a response body into text: the declared charset, else the document's own `<meta>`, else
UTF-8, else Windows-1252 (what browsers assume for unlabeled Western pages)."""

from __future__ import annotations

import codecs
import re

_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE
)
_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?([A-Za-z0-9._:-]+)""", re.IGNORECASE)


def _known(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def charset_of(content_type_header: str | None, body: bytes) -> str | None:
    """The charset the response declares, in the header or in the first 4 KB of the markup."""
    if content_type_header:
        m = _HEADER_CHARSET.search(content_type_header)
        if m and (name := _known(m.group(1))):
            return name
    m2 = _META_CHARSET.search(body[:4096])
    return _known(m2.group(1).decode("ascii", "replace")) if m2 else None


def decode_body(body: bytes, content_type_header: str | None) -> str:
    """Decode `body` as the browser would; never raises."""
    if body.startswith(codecs.BOM_UTF8):
        return body[len(codecs.BOM_UTF8) :].decode("utf-8", "replace")
    declared = charset_of(content_type_header, body)
    if declared:
        # A page labelled Latin-1 is read as Windows-1252, as the HTML standard says.
        name = "cp1252" if declared in ("latin-1", "iso8859-1", "ascii") else declared
        return body.decode(name, "replace")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return body.decode("cp1252", "replace")
