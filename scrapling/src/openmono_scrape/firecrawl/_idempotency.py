"""`x-idempotency-key` (or `Idempotency-Key`) on crawl and batch scrape: the same key again
gives the same job.

A record is per gateway key (the job's owner): the same idempotency key sent with another gateway
key is another record, so no key can reach another's job through it. A record holds the job id
and a fingerprint of the request (kind, version, body); the same idempotency key with another
request is 409, not a silently different job. Starting: `claim` reserves the key for a short
while (`PENDING_S`) before the job is created, so two identical requests at once make one job;
once the job exists, `keep` holds the record until the job expires (then the key is free again);
a start that fails (400, 429) `forget`s it. Bounds: in memory at most `MAX_PER_OWNER` records a
gateway key and `MAX_RECORDS` in all (the oldest give way); in Redis each record expires with
its job, and jobs are bounded per key by their bytes (`openmono_scrape.crawl.store`).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from openmono_scrape.crawl.redisstore import redis_client
from openmono_scrape.errors import BadRequest

HEADER = "x-idempotency-key"
# the IETF draft's name, which some clients send instead (Dify's Firecrawl plugin)
HEADERS = (HEADER, "idempotency-key")
PENDING_S = 60.0
MAX_RECORDS = 8192
MAX_PER_OWNER = 1024
_VALID = re.compile(r"^[\x21-\x7e]{1,256}$")
_REDIS_PREFIX = "openmono:firecrawl:idem:"


@dataclass(frozen=True)
class Record:
    job_id: str
    fingerprint: str


def key_of(headers: Mapping[str, str]) -> str | None:
    """The request's idempotency key (either header), or None; 400 for one that cannot be."""
    for name in HEADERS:
        if name in headers:
            return checked_key(headers[name])
    return None


def checked_key(raw: str | None) -> str | None:
    """The header's value, or None when absent; 400 for one that cannot be a key."""
    if raw is None:
        return None
    if not _VALID.match(raw):
        why = "1 to 256 visible ASCII characters (a UUID, say)"
        raise BadRequest(
            f"Bad Request: {HEADER}: {why}", [{"path": ["headers", HEADER], "message": why}]
        )
    return raw


def fingerprint(kind: str, version: str, body: dict[str, Any]) -> str:
    text = json.dumps([kind, version, body], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class IdempotencyStore(Protocol):
    async def claim(self, owner: str, key: str, record: Record) -> Record | None:
        """None when `key` was free and now holds `record` (for `PENDING_S`); else its record."""
        ...

    async def keep(self, owner: str, key: str, record: Record, until: float) -> None: ...
    async def forget(self, owner: str, key: str) -> None: ...
    async def close(self) -> None: ...


class MemoryIdempotency:
    def __init__(self, max_records: int = MAX_RECORDS, per_owner: int = MAX_PER_OWNER) -> None:
        self._records: OrderedDict[tuple[str, str], tuple[Record, float]] = OrderedDict()
        self.max_records = max_records
        self.per_owner = per_owner

    def _sweep(self, now: float) -> None:
        for k in [k for k, (_, until) in self._records.items() if until <= now]:
            del self._records[k]

    def _make_room(self, owner: str) -> None:
        mine = [k for k in self._records if k[0] == owner]
        if len(mine) >= self.per_owner:
            del self._records[mine[0]]
        while len(self._records) >= self.max_records:
            self._records.popitem(last=False)

    async def claim(self, owner: str, key: str, record: Record) -> Record | None:
        now = time.time()
        self._sweep(now)
        held = self._records.get((owner, key))
        if held is not None:
            return held[0]
        self._make_room(owner)
        self._records[(owner, key)] = (record, now + PENDING_S)
        return None

    async def keep(self, owner: str, key: str, record: Record, until: float) -> None:
        self._records[(owner, key)] = (record, until)

    async def forget(self, owner: str, key: str) -> None:
        self._records.pop((owner, key), None)

    async def close(self) -> None:
        self._records.clear()


class RedisIdempotency:
    """Records in the job store's Redis, so every scrape service replica sees them."""

    def __init__(self, client: Any) -> None:
        self.redis = client

    @classmethod
    def from_url(cls, url: str) -> RedisIdempotency:
        return cls(redis_client(url))

    @staticmethod
    def _name(owner: str, key: str) -> str:
        # hashed: the key is the client's text, and owner and key must not run into each other
        digest = hashlib.sha256(f"{owner}\0{key}".encode()).hexdigest()
        return _REDIS_PREFIX + digest

    @staticmethod
    def _value(record: Record) -> str:
        return json.dumps({"job": record.job_id, "fp": record.fingerprint})

    async def claim(self, owner: str, key: str, record: Record) -> Record | None:
        name = self._name(owner, key)
        for _ in range(3):  # the held record may expire between SET NX and GET
            if await self.redis.set(name, self._value(record), nx=True, px=int(PENDING_S * 1000)):
                return None
            raw = await self.redis.get(name)
            if raw is not None:
                held = json.loads(raw)
                return Record(str(held["job"]), str(held["fp"]))
        return None

    async def keep(self, owner: str, key: str, record: Record, until: float) -> None:
        await self.redis.set(self._name(owner, key), self._value(record), pxat=int(until * 1000))

    async def forget(self, owner: str, key: str) -> None:
        await self.redis.delete(self._name(owner, key))

    async def close(self) -> None:
        await self.redis.aclose()
