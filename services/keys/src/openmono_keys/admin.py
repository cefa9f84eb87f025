"""The store commands as functions, shared by `openmono keys` (natively, in-process) and
`python -m openmono_keys` (inside the compose `keys` container, JSON on stdout)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

from openmono_contracts.gatewaykeys import IssuedKey, KeyListing, UsageReport

from openmono_keys import store as _store
from openmono_keys import usage as _usage


def add(folder: Path, name: str, expires_days: float | None, rate: str | None) -> IssuedKey:
    now = datetime.now(UTC)
    return _store.KeyStore(folder).add(
        name,
        expires_at=_store.expiry(expires_days, now) if expires_days is not None else None,
        rate_per_min=_store.parse_rate(rate) if rate is not None else None,
        now=now,
    )


def listing(folder: Path, usage_dir: Path) -> KeyListing:
    return KeyListing(keys=_store.KeyStore(folder).infos(), usage=_usage.usage(usage_dir))


def report(usage_dir: Path, since: str | None) -> UsageReport:
    start = _usage.parse_since(since, time.time()) if since else None
    return _usage.usage(usage_dir, start)
