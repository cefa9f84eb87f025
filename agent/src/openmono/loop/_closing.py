"""`closing_stream`: close a model stream when we stop reading it early.

The `Model` protocol types `stream()` as an `AsyncIterator`; our implementations are async
generators, whose `aclose()` runs their `finally` (closing the HTTP response at once).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TypeVar

T = TypeVar("T")


@asynccontextmanager
async def closing_stream(stream: AsyncIterator[T]) -> AsyncIterator[AsyncIterator[T]]:
    try:
        yield stream
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
