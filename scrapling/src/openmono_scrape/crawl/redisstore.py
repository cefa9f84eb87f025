"""The durable job store: a job's parts in Redis, each change one Lua script (atomic).

Keys, `openmono:crawl:<id>:<part>`, all expiring at the job's `expires_at`:

    spec      the JobSpec (JSON)          state     hash: status, counts, bytes, limits, flags
    frontier  list of queued items        leases    sorted set: leased item -> deadline
    done      set of finished page keys   seen      set of every key the job has taken
    docs      list of documents (JSON)    errors    list of error records (JSON)
    blocked   list of URLs robots.txt refused          robots  hash: origin -> robots.txt text
    drivers   sorted set: driver chain token -> heartbeat deadline

and, for all jobs, `openmono:crawl:reserved` (job id -> expiry), `openmono:crawl:reserved-bytes`
(job id -> bytes it may hold: its bound while it runs, what it stored once it ended) and
`openmono:crawl:reserved-owner` (job id -> the key that made it, for the per-key bound).

A leased item is stored as the exact string the script read from the frontier (Lua re-encodes an
item whose attempts it counts), so the store remembers, per item it handed out, that string:
`renew`, `release` and `finish` name the lease by it.
"""

from __future__ import annotations

import json
import time
from typing import Any

from openmono_contracts.crawl import JOB_KEY_PREFIX, JobSpec

from openmono_scrape.crawl.memstore import iso
from openmono_scrape.crawl.store import (
    BYTE_BOUND_WARNING,
    KEY_BOUND_WARNING,
    TOTAL_BOUND_WARNING,
    CancelOutcome,
    Finished,
    FinishResult,
    Item,
    JobState,
    StoreFull,
    floor_bytes,
)

_RESERVED = f"{JOB_KEY_PREFIX}reserved"
_RESERVED_BYTES = f"{JOB_KEY_PREFIX}reserved-bytes"
_RESERVED_OWNER = f"{JOB_KEY_PREFIX}reserved-owner"
_WARNINGS = json.dumps(
    {"job": BYTE_BOUND_WARNING, "key": KEY_BOUND_WARNING, "total": TOTAL_BOUND_WARNING}
)
_PARTS = (
    "spec",
    "state",
    "frontier",
    "leases",
    "done",
    "seen",
    "docs",
    "errors",
    "blocked",
    "robots",
    "drivers",
)

_COMMON = """
local function expire_all()
  local at = redis.call('HGET', KEYS[2], 'expires_ms')
  if not at then return end
  for i = 1, 11 do redis.call('PEXPIREAT', KEYS[i], at) end
end
local function settle()
  local id = redis.call('HGET', KEYS[2], 'id')
  if id then redis.call('HSET', KEYS[12], id, redis.call('HGET', KEYS[2], 'bytes') or '0') end
end
local function end_if_drained(now)
  if redis.call('HGET', KEYS[2], 'status') ~= 'scraping' then return '' end
  if redis.call('LLEN', KEYS[3]) > 0 or redis.call('ZCARD', KEYS[4]) > 0 then return '' end
  local completed = tonumber(redis.call('HGET', KEYS[2], 'completed') or '0')
  local failed = tonumber(redis.call('HGET', KEYS[2], 'failed') or '0')
  local status = 'completed'
  if completed == 0 and failed > 0 then status = 'failed' end
  redis.call('HSET', KEYS[2], 'status', status, 'finished_at', now)
  settle()
  return status
end
"""

# ARGV: now, n, now_iso
_CLAIM = (
    _COMMON
    + """
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
if redis.call('HGET', KEYS[2], 'status') ~= 'scraping' then return {} end
local st = redis.call('HMGET', KEYS[2], 'concurrency', 'lease_s', 'delay_s', 'max_attempts',
  'not_before')
local concurrency, lease_s, delay = tonumber(st[1]), tonumber(st[2]), tonumber(st[3])
local max_attempts, not_before = tonumber(st[4]), tonumber(st[5] or '0')
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)) do
  redis.call('ZREM', KEYS[4], m)
  local it = cjson.decode(m)
  local a = (tonumber(it['a']) or 0) + 1
  if a >= max_attempts then
    if redis.call('SADD', KEYS[5], it['k']) == 1 then
      redis.call('RPUSH', KEYS[8], cjson.encode({id = it['k'], timestamp = ARGV[3],
        url = it['u'], code = 'WORKER_LOST',
        error = 'the worker reading this page was lost ' .. a ..
          ' times; the page is given up'}))
      redis.call('HINCRBY', KEYS[2], 'failed', 1)
    end
  else
    it['a'] = a
    redis.call('LPUSH', KEYS[3], cjson.encode(it))
  end
end
n = math.min(n, concurrency - redis.call('ZCARD', KEYS[4]))
if delay > 0 then
  if now < not_before then n = 0 end
  n = math.min(n, 1)
end
local out = {}
while #out < n do
  local m = redis.call('LPOP', KEYS[3])
  if not m then break end
  local it = cjson.decode(m)
  if redis.call('SISMEMBER', KEYS[5], it['k']) == 0 then
    redis.call('ZADD', KEYS[4], now + lease_s, m)
    table.insert(out, m)
  end
end
if #out > 0 and delay > 0 then redis.call('HSET', KEYS[2], 'not_before', now + delay) end
end_if_drained(now)
expire_all()
return out
"""
)

# ARGV: now, member...
_RENEW = """
local now = tonumber(ARGV[1])
local lease_s = tonumber(redis.call('HGET', KEYS[2], 'lease_s') or '0')
for i = 2, #ARGV do redis.call('ZADD', KEYS[4], 'XX', now + lease_s, ARGV[i]) end
return 1
"""

# ARGV: member
_RELEASE = """
if redis.call('ZREM', KEYS[4], ARGV[1]) == 1 then redis.call('LPUSH', KEYS[3], ARGV[1]) end
return 1
"""

# ARGV: member, key, doc, error, alias, self_blocked, now, warnings ({job, key, total}: JSON), n,
# (key, item)*, m, (key, url)*
_FINISH = (
    _COMMON
    + """
local member, key, doc, err, alias = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local now = tonumber(ARGV[7])
redis.call('ZREM', KEYS[4], member)
if redis.call('HGET', KEYS[2], 'status') ~= 'scraping' then return {'dropped', ''} end
if redis.call('SADD', KEYS[5], key) == 0 then
  local e = end_if_drained(now); expire_all(); return {'duplicate', e}
end
if alias ~= '' and alias ~= key and redis.call('SADD', KEYS[6], alias) == 0 then
  local e = end_if_drained(now); expire_all(); return {'duplicate', e}
end
local verdict = 'skipped'
if ARGV[6] == '1' then redis.call('RPUSH', KEYS[9], cjson.decode(member)['u']) end
if doc ~= '' then
  local warn = cjson.decode(ARGV[8])
  local size = string.len(doc)
  local bytes = tonumber(redis.call('HGET', KEYS[2], 'bytes') or '0')
  local st = redis.call('HMGET', KEYS[2], 'floor', 'key_bytes', 'total_bytes', 'owner', 'id')
  local floor, kb, tb = tonumber(st[1] or '0'), tonumber(st[2] or '-1'), tonumber(st[3] or '-1')
  local held = math.max(bytes + size, floor)
  local stop = nil
  if bytes + size > tonumber(redis.call('HGET', KEYS[2], 'max_bytes')) then
    stop = warn['job']
  elseif (kb >= 0 or tb >= 0) and held > math.max(bytes, floor) then
    -- the bytes of every job of this key and of all keys, as held now (reserved-bytes)
    local grows, used, mine = held - math.max(bytes, floor), 0, 0
    local all = redis.call('HGETALL', KEYS[12])
    for i = 1, #all, 2 do
      local n = tonumber(all[i + 1])
      used = used + n
      if redis.call('HGET', KEYS[13], all[i]) == (st[4] or '') then mine = mine + n end
    end
    if kb >= 0 and mine + grows > kb then stop = warn['key']
    elseif tb >= 0 and used + grows > tb then stop = warn['total'] end
  end
  if stop then
    redis.call('HSET', KEYS[2], 'stopped', '1', 'warning', stop)
    redis.call('DEL', KEYS[3])
  else
    redis.call('RPUSH', KEYS[7], doc)
    redis.call('HINCRBY', KEYS[2], 'bytes', size)
    redis.call('HINCRBY', KEYS[2], 'completed', 1)
    if (kb >= 0 or tb >= 0) and st[5] then redis.call('HSET', KEYS[12], st[5], held) end
    verdict = 'stored'
  end
end
if err ~= '' then
  redis.call('RPUSH', KEYS[8], err)
  redis.call('HINCRBY', KEYS[2], 'failed', 1)
  verdict = 'error'
end
local stopped = redis.call('HGET', KEYS[2], 'stopped') == '1'
local limit = tonumber(redis.call('HGET', KEYS[2], 'limit') or '0')
local total = tonumber(redis.call('HGET', KEYS[2], 'total') or '0')
local i = 9
local nd = tonumber(ARGV[i])
for j = 1, nd do
  if stopped or total >= limit then break end
  if redis.call('SADD', KEYS[6], ARGV[i + 2 * j - 1]) == 1 then
    redis.call('RPUSH', KEYS[3], ARGV[i + 2 * j])
    total = total + 1
  end
end
redis.call('HSET', KEYS[2], 'total', total)
i = i + 2 * nd + 1
for j = 1, tonumber(ARGV[i]) do
  if redis.call('SADD', KEYS[6], ARGV[i + 2 * j - 1]) == 1 then
    redis.call('RPUSH', KEYS[9], ARGV[i + 2 * j])
  end
end
local e = end_if_drained(now)
expire_all()
return {verdict, e}
"""
)

# KEYS: reserved, reserved-bytes, reserved-owner
# ARGV: now_ms, total (-1: none), job id, bytes (the job's floor), expires_ms, owner,
# key bound (-1: none)
# -> {0, used, mine} reserved; {1, used, mine} over the total; {2, used, mine} over the key's bound
_RESERVE = """
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])) do
  redis.call('HDEL', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
  redis.call('ZREM', KEYS[1], id)
end
local used, mine = 0, 0
local held = redis.call('HGETALL', KEYS[2])
for i = 1, #held, 2 do
  local n = tonumber(held[i + 1])
  used = used + n
  if redis.call('HGET', KEYS[3], held[i]) == ARGV[6] then mine = mine + n end
end
local want, total, bound = tonumber(ARGV[4]), tonumber(ARGV[2]), tonumber(ARGV[7])
if bound >= 0 and mine + want > bound then return {2, used, mine} end
if total >= 0 and used + want > total then return {1, used, mine} end
redis.call('ZADD', KEYS[1], ARGV[5], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
redis.call('HSET', KEYS[3], ARGV[3], ARGV[6])
return {0, used, mine}
"""

# ARGV: now
_CANCEL = (
    _COMMON
    + """
local st = redis.call('HGET', KEYS[2], 'status')
if not st then return 'missing' end
if st == 'completed' or st == 'failed' then return st end
if st ~= 'cancelled' then
  redis.call('HSET', KEYS[2], 'status', 'cancelled', 'finished_at', ARGV[1])
  redis.call('DEL', KEYS[3], KEYS[4])
  settle()
end
return 'cancelled'
"""
)

# ARGV: token, until, now
_BEAT = (
    _COMMON
    + """
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[11], '-inf', ARGV[3])
local max = tonumber(redis.call('HGET', KEYS[2], 'max_drivers') or '1')
if redis.call('ZSCORE', KEYS[11], ARGV[1]) or redis.call('ZCARD', KEYS[11]) < max then
  redis.call('ZADD', KEYS[11], ARGV[2], ARGV[1])
  expire_all()
  return 1
end
return 0
"""
)

# ARGV: origin, text
_SET_ROBOTS = (
    _COMMON
    + """
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
redis.call('HSET', KEYS[10], ARGV[1], ARGV[2])
expire_all()
return 1
"""
)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def redis_client(url: str) -> Any:
    """A `redis.asyncio.Redis` on the jobs' Redis, with the timeouts every call to it has."""
    import redis.asyncio as aioredis

    return aioredis.from_url(url, socket_timeout=5.0, socket_connect_timeout=3.0)


class RedisJobStore:
    durable = True

    def __init__(
        self, client: Any, total_bytes: int | None = None, key_bytes: int | None = None
    ) -> None:
        """`client`: a `redis.asyncio.Redis` (closed by `close`); `total_bytes`: what all jobs
        may hold together, `key_bytes`: what the jobs of one key may (both checked when a job is
        made; None: no check, as in a driver)."""
        self.redis = client
        self.total_bytes = total_bytes
        self.key_bytes = key_bytes
        self._reserve = client.register_script(_RESERVE)
        self._raw: dict[Item, str] = {}
        self._claim = client.register_script(_CLAIM)
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)
        self._finish = client.register_script(_FINISH)
        self._cancel = client.register_script(_CANCEL)
        self._beat = client.register_script(_BEAT)
        self._set_robots = client.register_script(_SET_ROBOTS)

    @classmethod
    def from_url(
        cls, url: str, total_bytes: int | None = None, key_bytes: int | None = None
    ) -> RedisJobStore:
        return cls(redis_client(url), total_bytes, key_bytes)

    @staticmethod
    def keys(job_id: str) -> list[str]:
        parts = [f"{JOB_KEY_PREFIX}{job_id}:{part}" for part in _PARTS]
        return [*parts, _RESERVED_BYTES, _RESERVED_OWNER]

    async def create(self, spec: JobSpec, items: list[Item]) -> None:
        keys = self.keys(spec.id)
        if self.total_bytes is not None or self.key_bytes is not None:
            args = [
                int(time.time() * 1000),
                -1 if self.total_bytes is None else self.total_bytes,
                spec.id,
                floor_bytes(spec),
                int(spec.expires_at * 1000),
                spec.owner,
                -1 if self.key_bytes is None else self.key_bytes,
            ]
            reserve_keys = [_RESERVED, _RESERVED_BYTES, _RESERVED_OWNER]
            over, used, mine = (int(v) for v in await self._reserve(keys=reserve_keys, args=args))
            if over == 2 and self.key_bytes is not None:
                raise StoreFull(mine, self.key_bytes, per_key=True)
            if over and self.total_bytes is not None:
                raise StoreFull(used, self.total_bytes)
        unique: dict[str, Item] = {}
        for item in items:
            unique.setdefault(item.key, item)
        state = {
            "id": spec.id,
            "status": "scraping",
            "total": len(unique),
            "completed": 0,
            "failed": 0,
            "bytes": 0,
            "limit": spec.rules.limit if spec.rules else 0,
            "concurrency": spec.concurrency,
            "lease_s": spec.lease_s,
            "delay_s": spec.delay_s,
            "max_attempts": spec.max_attempts,
            "max_bytes": spec.max_bytes,
            "max_drivers": spec.max_drivers,
            "expires_ms": int(spec.expires_at * 1000),
            # the bounds a document is checked against when it is stored (-1: none)
            "owner": spec.owner,
            "floor": floor_bytes(spec),
            "key_bytes": -1 if self.key_bytes is None else self.key_bytes,
            "total_bytes": -1 if self.total_bytes is None else self.total_bytes,
        }
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(keys[0], spec.model_dump_json())
            pipe.hset(keys[1], mapping=state)
            if unique:
                pipe.sadd(keys[5], *unique)
                pipe.rpush(keys[2], *(item.encode() for item in unique.values()))
            for key in (keys[0], keys[1], keys[2], keys[5]):
                pipe.pexpireat(key, state["expires_ms"])
            await pipe.execute()

    async def spec(self, job_id: str) -> JobSpec | None:
        raw = await self.redis.get(self.keys(job_id)[0])
        return JobSpec.model_validate_json(raw) if raw else None

    async def state(self, job_id: str) -> JobState | None:
        raw = await self.redis.hgetall(self.keys(job_id)[1])
        if not raw:
            return None
        st = {_text(k): _text(v) for k, v in raw.items()}
        return JobState(
            status=st["status"],  # type: ignore[arg-type]  # only the scripts write it
            total=int(st.get("total", 0)),
            completed=int(st.get("completed", 0)),
            failed=int(st.get("failed", 0)),
            bytes=int(st.get("bytes", 0)),
            finished_at=float(st["finished_at"]) if "finished_at" in st else None,
            warning=st.get("warning"),
        )

    async def claim(self, job_id: str, n: int, now: float) -> list[Item]:
        raw = await self._claim(keys=self.keys(job_id), args=[now, n, iso(now)])
        out = []
        for member in raw:
            text = _text(member)
            item = Item.decode(text)
            self._raw[item] = text
            out.append(item)
        return out

    async def renew(self, job_id: str, items: list[Item], now: float) -> None:
        members = [self._raw[item] for item in items if item in self._raw]
        if members:
            await self._renew(keys=self.keys(job_id), args=[now, *members])

    async def release(self, job_id: str, item: Item) -> None:
        member = self._raw.pop(item, None)
        if member is not None:
            await self._release(keys=self.keys(job_id), args=[member])

    async def finish(self, job_id: str, item: Item, done: Finished, now: float) -> FinishResult:
        member = self._raw.pop(item, None) or item.encode()
        args: list[Any] = [
            member,
            item.key,
            done.document or "",
            json.dumps(done.error) if done.error else "",
            done.alias_key or "",
            "1" if done.self_blocked else "",
            now,
            _WARNINGS,
            len(done.discovered),
        ]
        for new in done.discovered:
            args += [new.key, new.encode()]
        args.append(len(done.blocked))
        for key, url in done.blocked:
            args += [key, url]
        verdict, ended = await self._finish(keys=self.keys(job_id), args=args)
        return FinishResult(_text(verdict), _text(ended) or None)  # type: ignore[arg-type]

    async def documents(self, job_id: str, skip: int, limit: int) -> list[str]:
        raw = await self.redis.lrange(self.keys(job_id)[6], skip, skip + limit - 1)
        return [_text(d) for d in raw]

    async def errors(self, job_id: str) -> tuple[list[str], list[str]]:
        keys = self.keys(job_id)
        errs = await self.redis.lrange(keys[7], 0, -1)
        blocked = await self.redis.lrange(keys[8], 0, -1)
        return [_text(e) for e in errs], [_text(b) for b in blocked]

    async def cancel(self, job_id: str, now: float) -> CancelOutcome:
        return _text(await self._cancel(keys=self.keys(job_id), args=[now]))  # type: ignore[return-value]

    async def robots(self, job_id: str, origin: str) -> str | None:
        raw = await self.redis.hget(self.keys(job_id)[9], origin)
        return _text(raw) if raw is not None else None

    async def set_robots(self, job_id: str, origin: str, text: str) -> None:
        await self._set_robots(keys=self.keys(job_id), args=[origin, text])

    async def mark_once(self, job_id: str, flag: str) -> bool:
        key = self.keys(job_id)[1]
        if not await self.redis.exists(key):
            return False
        return bool(await self.redis.hsetnx(key, f"flag:{flag}", 1))

    async def beat(self, job_id: str, token: str, until: float, now: float) -> bool:
        return bool(await self._beat(keys=self.keys(job_id), args=[token, until, now]))

    async def leave(self, job_id: str, token: str) -> None:
        await self.redis.zrem(self.keys(job_id)[10], token)

    async def live_drivers(self, job_id: str, now: float) -> int:
        return int(await self.redis.zcount(self.keys(job_id)[10], f"({now}", "+inf"))

    async def owned(self, owner: str) -> list[str]:
        # reserved-owner keeps an id until its reservation is swept: keep those whose spec lives
        mapping = await self.redis.hgetall(_RESERVED_OWNER)
        ids = sorted(_text(k) for k, v in mapping.items() if _text(v) == owner)
        async with self.redis.pipeline(transaction=False) as pipe:
            for job_id in ids:
                pipe.exists(self.keys(job_id)[0])
            alive = await pipe.execute()
        return [job_id for job_id, there in zip(ids, alive, strict=True) if there]

    async def close(self) -> None:
        await self.redis.aclose()
