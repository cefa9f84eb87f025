"""The scrape cache: fetched pages by normalised URL and fetch options, bounded in bytes, LRU.

What is stored is the page an engine fetched (final URL, status, headers, body, rendered DOM), not
the text made from it, so one entry serves every format, `main_content` choice and length cut, and
the native `/scrape` and the Firecrawl API share it. The key holds what changes the page itself:
the normalised URL, whether a browser rendered it, and the request headers the caller set.

A request says how old a copy it accepts (`max_age_s`); an entry older than that is a miss and is
replaced by the fresh fetch. Every fetched page is stored (unless the caller says not to), so a
later request that allows an age can be served without asking the origin.

Two stores behind one interface:
- `MemoryStore`: an ordered dict in this process (LRU order), with its byte total;
- `RedisStore`: when `SCRAPE_CACHE_REDIS_URL` is set (the native stack and compose point it at
  the broker's Redis, another database). Redis's own `maxmemory` eviction would also hit the
  broker's keys, so the bound is kept here: a Lua script stores an entry, adds its size to a byte
  counter and drops the least recently used entries (a sorted set by last use) until the total
  fits, all in one atomic step; several scrape processes then share one bounded cache.
A Redis that fails (down, timeout) makes the cache fall back to memory for a while, never fails a
scrape: the cache is an optimisation.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from openmono_scrape.page import FetchedPage

log = logging.getLogger("openmono_scrape")

_DEFAULT_PORTS = {"http": 80, "https": 443}
# After a Redis failure the memory store is used for this long before Redis is tried again.
_REDIS_RETRY_S = 30.0


def normalise_url(url: str) -> str:
    """Scheme and host lower-cased, default port and fragment dropped, empty path as `/`.

    The query is kept as sent: reordering parameters can change what a site answers.
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower().rstrip(".")
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    if parts.username or parts.password:
        netloc = f"{parts.username or ''}:{parts.password or ''}@{netloc}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def cache_key(url: str, *, render: bool, headers: Mapping[str, str] | None = None) -> str:
    """The entry's name: a digest of the normalised URL and the options that change the page."""
    options = {
        "url": normalise_url(url),
        "render": render,
        "headers": sorted((k.lower(), v) for k, v in (headers or {}).items()),
    }
    raw = json.dumps(options, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(raw).hexdigest()


@dataclass(frozen=True)
class CachedPage:
    """A page as it was fetched, who fetched it, and when (epoch seconds)."""

    page: FetchedPage
    escalated_from: str | None
    stored_at: float

    @property
    def stored_at_iso(self) -> str:
        return datetime.fromtimestamp(self.stored_at, UTC).isoformat().replace("+00:00", "Z")

    def encode(self) -> bytes:
        """`header JSON \\n body rendered` (lengths in the header): bytes stay bytes."""
        rendered = (self.page.rendered_html or "").encode("utf-8")
        head = {
            "url": self.page.url,
            "status": self.page.status,
            "headers": self.page.headers,
            "engine": self.page.engine,
            "body_len": len(self.page.body),
            "rendered": self.page.rendered_html is not None,
            "escalated_from": self.escalated_from,
            "stored_at": self.stored_at,
        }
        return json.dumps(head, separators=(",", ":")).encode() + b"\n" + self.page.body + rendered

    @classmethod
    def decode(cls, data: bytes) -> CachedPage:
        head_raw, _, rest = data.partition(b"\n")
        head: dict[str, Any] = json.loads(head_raw)
        body_len = int(head["body_len"])
        rendered = rest[body_len:].decode("utf-8") if head["rendered"] else None
        page = FetchedPage(
            url=str(head["url"]),
            status=int(head["status"]),
            headers={str(k): str(v) for k, v in dict(head["headers"]).items()},
            body=rest[:body_len],
            engine=head["engine"],
            rendered_html=rendered,
        )
        return cls(page, head.get("escalated_from"), float(head["stored_at"]))


class Store(Protocol):
    async def get(self, key: str) -> bytes | None: ...
    async def put(self, key: str, value: bytes) -> None: ...
    async def close(self) -> None: ...


class MemoryStore:
    """LRU over an ordered dict, bounded by the sum of the stored values' sizes."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._items: OrderedDict[str, bytes] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    async def get(self, key: str) -> bytes | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    async def put(self, key: str, value: bytes) -> None:
        old = self._items.pop(key, None)
        if old is not None:
            self.bytes -= len(old)
        self._items[key] = value
        self.bytes += len(value)
        while self.bytes > self.max_bytes and self._items:
            _, dropped = self._items.popitem(last=False)
            self.bytes -= len(dropped)

    async def close(self) -> None:
        self._items.clear()
        self.bytes = 0


# KEYS: entry, LRU sorted set, sizes hash, byte counter. ARGV: value, now, capacity.
_PUT_SCRIPT = """
local size = string.len(ARGV[1])
local old = redis.call('HGET', KEYS[3], KEYS[1])
if old then redis.call('DECRBY', KEYS[4], old) end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], KEYS[1])
redis.call('HSET', KEYS[3], KEYS[1], size)
local total = redis.call('INCRBY', KEYS[4], size)
local evicted = 0
while total > tonumber(ARGV[3]) do
  local oldest = redis.call('ZPOPMIN', KEYS[2])
  if #oldest == 0 then break end
  local name = oldest[1]
  local gone = tonumber(redis.call('HGET', KEYS[3], name) or '0')
  redis.call('HDEL', KEYS[3], name)
  redis.call('DEL', name)
  total = redis.call('DECRBY', KEYS[4], gone)
  evicted = evicted + 1
end
return evicted
"""


class RedisStore:
    """The same LRU, kept in Redis under `prefix` (entries, last-use set, sizes, byte total)."""

    def __init__(self, url: str, max_bytes: int, prefix: str = "openmono:scrape:") -> None:
        import redis.asyncio as aioredis

        self.max_bytes = max_bytes
        self.prefix = prefix
        self._lru = f"{prefix}lru"
        self._sizes = f"{prefix}sizes"
        self._total = f"{prefix}bytes"
        self._redis: Any = aioredis.from_url(
            url, socket_timeout=1.0, socket_connect_timeout=1.0, health_check_interval=30
        )
        self._put = self._redis.register_script(_PUT_SCRIPT)

    async def get(self, key: str) -> bytes | None:
        name = self.prefix + key
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.get(name)
            pipe.zadd(self._lru, {name: time.time()}, xx=True)
            value, _ = await pipe.execute()
        return bytes(value) if value is not None else None

    async def put(self, key: str, value: bytes) -> None:
        keys = [self.prefix + key, self._lru, self._sizes, self._total]
        await self._put(keys=keys, args=[value, time.time(), self.max_bytes])

    async def close(self) -> None:
        await self._redis.aclose()


class ScrapeCache:
    """Pages by key; Redis when configured and answering, else memory. Never raises."""

    def __init__(
        self, max_bytes: int, redis_url: str | None = None, redis_prefix: str = "openmono:scrape:"
    ) -> None:
        self.max_bytes = max_bytes
        # One entry may take at most a quarter of the cache, so one huge page cannot flush it.
        self.max_entry_bytes = max(1, max_bytes // 4)
        self.memory = MemoryStore(max_bytes)
        self.redis = RedisStore(redis_url, max_bytes, redis_prefix) if redis_url else None
        self._redis_down_until = 0.0
        self.hits = 0
        self.misses = 0

    @property
    def backend(self) -> str:
        return "redis" if self._use_redis() else "memory"

    def _use_redis(self) -> bool:
        return self.redis is not None and time.monotonic() >= self._redis_down_until

    def _redis_failed(self, exc: Exception) -> None:
        log.warning("scrape cache: Redis failed (%s); using memory for a while", exc)
        self._redis_down_until = time.monotonic() + _REDIS_RETRY_S

    async def _store_get(self, key: str) -> bytes | None:
        if self.redis is not None and self._use_redis():
            try:
                return await self.redis.get(key)
            except Exception as exc:  # any Redis trouble: the cache steps aside
                self._redis_failed(exc)
        return await self.memory.get(key)

    async def get(self, key: str, max_age_s: float | None) -> CachedPage | None:
        """The entry when it is at most `max_age_s` old; None (a miss) otherwise or when off."""
        if not max_age_s or max_age_s <= 0 or self.max_bytes <= 0:
            return None
        raw = await self._store_get(key)
        entry = None
        if raw is not None:
            try:
                entry = CachedPage.decode(raw)
            except (ValueError, KeyError, TypeError):
                log.warning("scrape cache: unreadable entry %s ignored", key[:12])
        if entry is None or time.time() - entry.stored_at > max_age_s:
            self.misses += 1
            return None
        self.hits += 1
        return entry

    async def get_raw(self, key: str) -> bytes | None:
        """Another kind of entry (a change-tracking snapshot) by its own key; any age."""
        if self.max_bytes <= 0:
            return None
        return await self._store_get(key)

    async def put(self, key: str, entry: CachedPage) -> None:
        await self.put_raw(key, entry.encode())

    async def put_raw(self, key: str, value: bytes) -> None:
        """Stored under the same byte bound and LRU as the pages."""
        if self.max_bytes <= 0:
            return
        if len(value) > self.max_entry_bytes:
            return
        if self.redis is not None and self._use_redis():
            try:
                await self.redis.put(key, value)
            except Exception as exc:
                self._redis_failed(exc)
            else:
                return
        await self.memory.put(key, value)

    def stats(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "max_bytes": self.max_bytes,
            "memory_bytes": self.memory.bytes,
            "memory_entries": len(self.memory),
            "hits": self.hits,
            "misses": self.misses,
        }

    async def close(self) -> None:
        await self.memory.close()
        if self.redis is not None:
            try:
                await self.redis.close()
            except Exception as exc:  # closing a broken connection must not fail shutdown
                log.debug("scrape cache: closing Redis: %s", exc)
