"""Content extraction: decoded HTML in, main content (or the whole page) as markdown, text or HTML.

`extract(html, url, fmt, main_content)` is a pure function that never raises; `Extracted` is what
it gives (title, content). The driver and its steps are `_pipeline`; each step is a module of its
own (`_pagetype`, `_main`, `_region`, `_forum`, `_product`, `_markdown`, ...). What it does and
how well, measured: docs/extraction.md.
"""

from ._pipeline import Extracted, extract

__all__ = ["Extracted", "extract"]
