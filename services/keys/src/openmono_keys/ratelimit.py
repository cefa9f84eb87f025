"""Per-key rate limits: a token bucket per key name, in memory.

A key limited to N requests a minute may spend N at once and earns one back every 60/N s. The
gateway asks only for keys that have a limit, after it checked the key, so a wrong secret never
spends a box's budget. State is lost on a restart (every bucket starts full): a limit that
forgets at most one minute's worth.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class _Bucket:
    rate_per_min: int
    tokens: float
    at: float


class RateLimiter:
    """`take(name, rate)` -> 0 when the request may pass, else whole seconds until it may."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def take(self, name: str, rate_per_min: int) -> int:
        now = self._clock()
        bucket = self._buckets.get(name)
        if bucket is None or bucket.rate_per_min != rate_per_min:
            # a new key, or its limit changed: start full at the new size
            bucket = _Bucket(rate_per_min, float(rate_per_min), now)
            self._buckets[name] = bucket
        per_s = rate_per_min / 60.0
        bucket.tokens = min(float(rate_per_min), bucket.tokens + (now - bucket.at) * per_s)
        bucket.at = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0
        return max(1, math.ceil((1.0 - bucket.tokens) / per_s))
