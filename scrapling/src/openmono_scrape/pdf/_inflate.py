"""A cap on how many bytes pdfminer inflates while one PDF is converted.

A Flate stream can inflate a thousandfold: a 10 MiB file under the byte limit could ask for
10 GiB and take the service down. pdfminer inflates each stream whole with `zlib.decompress`
and has no cap of its own, so its module's `zlib` is replaced by `_BoundedZlib`, which inflates
at most what is left of the current conversion's allowance and raises `InflateLimitExceeded`
past it. The allowance lives in a thread-local (`inflate_allowance`): a conversion runs in one
thread, and one without an allowance (any other pdfminer use) is not capped.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_state = threading.local()


class InflateLimitExceeded(Exception):
    """The conversion's streams inflate past the allowance."""


def _left() -> int | None:
    left: int | None = getattr(_state, "left", None)
    return left


def _charge(produced: int) -> None:
    left = _left()
    if left is None:
        return
    _state.left = left - produced
    if _state.left < 0:
        raise InflateLimitExceeded


class _Decompressor:
    """`zlib.decompressobj()` that charges what it produces (pdfminer's corrupted-data path)."""

    def __init__(self, *args: Any) -> None:
        self._inner = zlib.decompressobj(*args)

    def decompress(self, data: bytes, max_length: int = 0) -> bytes:
        left = _left()
        if left is not None:
            max_length = min(max_length, left + 1) if max_length else left + 1
        out = self._inner.decompress(data, max_length)
        _charge(len(out))
        return out

    def flush(self, *args: Any) -> bytes:
        out = self._inner.flush(*args)
        _charge(len(out))
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _BoundedZlib:
    """The part of the `zlib` module pdfminer uses, capped; everything else passes through."""

    error = zlib.error

    def decompress(self, data: bytes, *args: Any) -> bytes:
        if _left() is None:
            return zlib.decompress(data, *args)
        inner = _Decompressor(*args[:1])
        out = inner.decompress(data)
        if not inner.eof:  # what zlib.decompress says of a cut stream; pdfminer then salvages it
            raise zlib.error("incomplete or truncated stream")
        return out

    def decompressobj(self, *args: Any) -> _Decompressor:
        return _Decompressor(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(zlib, name)


def install() -> None:
    """Put the cap in pdfminer (idempotent)."""
    from pdfminer import pdftypes

    # `zlib` is the module pdftypes imported, not an exported name: hence the ignores
    if not isinstance(pdftypes.zlib, _BoundedZlib):  # type: ignore[attr-defined]
        pdftypes.zlib = _BoundedZlib()  # type: ignore[attr-defined,assignment]


@contextmanager
def inflate_allowance(max_bytes: int) -> Iterator[None]:
    """Cap what pdfminer inflates in this thread to `max_bytes` until the block ends."""
    install()
    _state.left = max_bytes
    try:
        yield
    finally:
        _state.left = None


def causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and every exception it wraps (in its args: pdfplumber's way) or was caused by."""
    seen: set[int] = set()
    todo: list[object] = [exc]
    while todo:
        item = todo.pop()
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        todo += [item.__cause__, item.__context__, *item.args]


def hit_limit(exc: BaseException) -> bool:
    """Whether `exc` is, wraps or was caused by `InflateLimitExceeded`."""
    return any(isinstance(item, InflateLimitExceeded) for item in causes(exc))
