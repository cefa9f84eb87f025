"""Per-call state in Redis shared by the task and the agent's Celery executor: claim and heartbeat.

Two keys per Celery task id:

    openmono:call:<id>:claim   who owns the call: "<host>:<pid>" of the process that started it,
                               or "abandoned" when the agent gave up before any process did.
                               Set with NX, so the first writer wins.
    openmono:call:<id>:alive   refreshed every second by the process running the call; it expires
                               a few seconds after that process dies.

Why: a side-effecting call must never run twice. Its message is acknowledged as soon as a pool
process accepts it, but a broker can still hand a message out again (a worker killed between
receiving and accepting it, a visibility-timeout restore). The claim makes that harmless: a second
delivery finds the key and returns an error result instead of running the tool again. The agent
uses the same key to cancel a call nobody started yet (it claims "abandoned" first), and the
heartbeat to notice a dead worker long before the call's timeout. The key names and the
lost-worker message are protocol the agent shares: they live in `openmono_contracts.calls`.
"""

from __future__ import annotations

import os
import socket
import threading
from dataclasses import dataclass
from typing import Literal

import redis
from openmono_contracts.calls import (
    ABANDONED,
    alive_key,
    claim_key,
    lost_worker_error,
)
from redis.commands.core import Script

__all__ = [
    "ABANDONED",
    "Claim",
    "Heartbeat",
    "alive_key",
    "claim",
    "claim_key",
    "holder_id",
    "lost_worker_error",
]

# The claim outlives every possible redelivery (visibility timeout, result expiry).
CLAIM_TTL_S = 6 * 3600
HEARTBEAT_EVERY_S = 1.0
# A few missed beats before anyone calls the process dead: tolerant of a loaded machine.
HEARTBEAT_TTL_MS = 5000


def holder_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


Claim = Literal["first", "redelivered", "duplicate", "abandoned", "taken"]

# One round trip, atomic: the claim and the first heartbeat are written together, and a second
# delivery decides from both keys at once (no window between reading and writing them).
_CLAIM_LUA = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3])
  return 'first'
end
if redis.call('GET', KEYS[1]) == ARGV[5] then return 'abandoned' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'duplicate' end
if ARGV[4] == '1' then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3])
  return 'redelivered'
end
return 'taken'
"""


_scripts: dict[int, Script] = {}


def _claim_script(client: redis.Redis) -> Script:
    """The claim script bound to `client` (EVALSHA, loaded on first use)."""
    script = _scripts.get(id(client))
    if script is None:
        script = _scripts[id(client)] = client.register_script(_CLAIM_LUA)
    return script


def claim(client: redis.Redis, task_id: str, *, read_only: bool) -> Claim:
    """Claim the call for this process and start its heartbeat key.

    "first": nobody had it. "duplicate": a live process is running it (the broker handed the
    message out twice): do nothing. "redelivered": a read-only call whose process died (it runs
    again). "taken": a side-effecting call whose process died (it must not run again).
    "abandoned": the agent gave up on it before it started (it must not run).
    """
    keys = [claim_key(task_id), alive_key(task_id)]
    args: list[str | int] = [
        holder_id(),
        CLAIM_TTL_S,
        HEARTBEAT_TTL_MS,
        "1" if read_only else "0",
        ABANDONED,
    ]
    answer = _claim_script(client)(keys=keys, args=args)
    text = answer.decode() if isinstance(answer, bytes) else str(answer)
    if text not in ("first", "redelivered", "duplicate", "abandoned", "taken"):
        raise ValueError(f"unexpected claim answer {text!r}")
    return text  # type: ignore[return-value]


@dataclass
class _Beat:
    task_id: str | None = None


class Heartbeat:
    """One daemon thread per pool process that keeps the current call's `alive` key fresh."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self._current = _Beat()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="openmono-heartbeat", daemon=True)
        self._thread.start()

    def beat_for(self, task_id: str | None) -> None:
        """Refresh `task_id`'s key from now on (None: stop refreshing)."""
        self._current.task_id = task_id

    def _loop(self) -> None:
        while True:
            self._wake.wait(HEARTBEAT_EVERY_S)
            task_id = self._current.task_id
            if task_id is None:
                continue
            try:
                self.client.set(alive_key(task_id), holder_id(), px=HEARTBEAT_TTL_MS)
            except redis.RedisError:
                # Redis is gone for a moment: the agent sees the same outage and reports it.
                continue
