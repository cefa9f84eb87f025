"""`CeleryExecutor`: run each tool call on the Celery worker over Redis (docs/architecture.md
§1, §7).

Same `Executor` contract as `LocalExecutor`, and the worker runs the same `run_tool`, so the same
call gives the same `ToolResult` (except `elapsed_ms`). What crossing a process boundary adds:

1. Route and send: the request gets the route of its workspace (`_routes.routed`: the workspace's
   id file, else this box) and goes to that route's queue, so only a worker with these files can
   take it (and the worker checks the route again). `openmono.tools.run` with the ToolRequest as
   JSON, soft limit = `timeout_s`, hard = +5 s. Redis unreachable -> an `ok=False` "tool worker
   unreachable" result within seconds; tools are never run locally as a silent fallback.
2. Wait without blocking the loop: one pattern subscription per executor receives every result the
   backend publishes for our task ids; a poll every half second reads the call's claim and
   heartbeat keys (`openmono_contracts.calls`) and the stored result, in case a message was missed.
3. Worker lost (heartbeat expired, no result): a side-effecting call returns an error saying so and
   is never sent again; a read-only call is sent again (its old message can no longer run: its
   claim says "abandoned"). Nobody picked the call up within the pickup timeout: the workers are
   asked which queues they consume; none answers -> unreachable; none consumes this call's queue
   -> an error naming the workspace, its queue and what to start (the call is abandoned first).
4. Cancel (`cancel(call_id)` or the awaiting task cancelled): a call nobody started is abandoned
   through its claim; a running one is revoked with terminate, and the worker kills the tool's
   process groups and the pool process running it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis
from openmono_contracts import ToolRequest, ToolResult
from openmono_contracts.calls import (
    ABANDONED,
    HARD_LIMIT_EXTRA_S,
    TASK_NAME,
    alive_key,
    claim_key,
    lost_worker_error,
)
from openmono_worker import WorkerSettings, create_app, get_tool
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from openmono.executor._errors import ExecutorError, ExecutorUnavailable
from openmono.executor._protocol import ExecutorSettings
from openmono.executor._routes import (
    RouteError,
    consumers,
    no_consumer_error,
    redis_password,
    route_report,
    routed,
)

__all__ = ["UNREACHABLE", "CeleryExecutor", "route_report"]

UNREACHABLE = "tool worker unreachable"
_POLL_S = 0.5
_SEND_TIMEOUT_S = 6.0
# Beyond the hard limit, how long we wait for the worker to report before giving up on it.
_REPORT_GRACE_S = 10.0
_CANCEL_GRACE_S = 5.0
_MAX_RESENDS = 3


class _Unreachable(ExecutorError):
    """Redis (or every worker) cannot be reached; becomes an `ok=False` result, never raised out."""


class _NoConsumer(ExecutorError):
    """Workers answer, but none consumes the call's queue; becomes an `ok=False` result."""


@dataclass
class _Call:
    req: ToolRequest
    read_only: bool
    start: float = field(default_factory=time.perf_counter)
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    task_id: str = ""


def _result(req: ToolRequest, start: float, error: str) -> ToolResult:
    elapsed = round((time.perf_counter() - start) * 1000.0, 3)
    return ToolResult(call_id=req.call_id, ok=False, error=error, elapsed_ms=elapsed)


def _text(value: bytes | str | None) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


class _Results:
    """One `PSUBSCRIBE` for all of this executor's task ids; futures keyed by task id."""

    def __init__(self, client: aioredis.Redis, key_prefix: str, pattern: str) -> None:
        self._client = client
        self._key_prefix = key_prefix
        self._pattern = pattern
        self._waiters: dict[str, asyncio.Future[bytes]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    async def expect(self, task_id: str) -> asyncio.Future[bytes]:
        """A future for `task_id`'s published result; subscribed before it returns."""
        async with self._lock:
            if self._reader is None or self._reader.done():
                pubsub = self._client.pubsub()
                await pubsub.psubscribe(self._pattern)
                # Wait for the confirmation: from here on, nothing published can be missed.
                while True:
                    msg = await pubsub.get_message(timeout=_SEND_TIMEOUT_S)
                    if msg is None:
                        raise _Unreachable("no answer to PSUBSCRIBE")
                    if msg.get("type") == "psubscribe":
                        break
                self._reader = asyncio.create_task(self._read(pubsub), name="celery-results")
        fut: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._waiters[task_id] = fut
        return fut

    def forget(self, task_id: str) -> None:
        self._waiters.pop(task_id, None)

    async def _read(self, pubsub: Any) -> None:
        try:
            while True:
                msg = await pubsub.get_message(timeout=None)
                if msg is None or msg.get("type") != "pmessage":
                    continue
                channel = _text(msg["channel"]) or ""
                fut = self._waiters.get(channel.removeprefix(self._key_prefix))
                if fut is not None and not fut.done():
                    fut.set_result(msg["data"])
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the connection died: every waiter learns it now
            for fut in self._waiters.values():
                if not fut.done():
                    fut.set_exception(_Unreachable(f"lost the connection to Redis: {exc}"))
        finally:
            with contextlib.suppress(Exception):
                await pubsub.aclose()

    async def aclose(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader


class CeleryExecutor:
    """Executor that sends tool calls to the Celery worker (see the module docstring)."""

    def __init__(
        self,
        broker_url: str,
        *,
        pickup_timeout_s: float = 5.0,
        queue_timeout_s: float = 600.0,
        redis_password: str | None = None,
    ) -> None:
        # the URL as configured, for messages; the one that connects carries the password
        # (REDIS_PASSWORD: given, else the environment's; openmono_contracts.redisauth)
        self._broker_shown = broker_url
        self._cfg = WorkerSettings(broker_url=broker_url)
        if redis_password is not None:
            self._cfg = WorkerSettings(broker_url=broker_url, redis_password=redis_password)
        self._app = create_app(self._cfg)
        self._pickup_timeout_s = pickup_timeout_s
        self._queue_timeout_s = queue_timeout_s
        # Our task ids start with this executor's prefix, so one pattern covers all our results.
        self._prefix = uuid.uuid4().hex[:12]
        key_prefix = _text(self._app.backend.get_key_for_task("x"))[:-1]  # type: ignore[index]
        self._redis = aioredis.Redis.from_url(
            self._cfg.broker_url,
            socket_connect_timeout=self._cfg.connect_timeout_s,
            socket_timeout=_SEND_TIMEOUT_S,
            # No silent retries: a dead Redis must become an answer within seconds.
            retry=Retry(NoBackoff(), 0),
        )
        self._results = _Results(self._redis, key_prefix, f"{key_prefix}{self._prefix}.*")
        self._key_prefix = key_prefix
        self._running: dict[str, _Call] = {}
        # deletions of results already read, in flight; awaited by aclose
        self._drops: set[asyncio.Task[None]] = set()
        self._idle = asyncio.Event()
        self._closed = False

    @classmethod
    def from_settings(cls, settings: ExecutorSettings) -> CeleryExecutor:
        broker = settings.broker_url
        if not broker:
            raise ExecutorUnavailable("CeleryExecutor needs a broker URL (OPENMONO_BROKER_URL)")
        return cls(broker, redis_password=redis_password())

    # -- Executor protocol ------------------------------------------------------------------

    async def run(self, req: ToolRequest) -> ToolResult:
        if self._closed:
            return ToolResult(call_id=req.call_id, ok=False, error="executor is closed")
        tool = get_tool(req.tool)
        call = _Call(req, read_only=tool is not None and tool.read_only)
        self._running[req.call_id] = call
        try:
            call.req = routed(req)
            return await self._run(call)
        except RouteError as exc:
            return _result(req, call.start, f"cannot route the call to a tool worker: {exc}")
        except _NoConsumer as exc:
            return _result(req, call.start, str(exc))
        except _Unreachable as exc:
            return _result(req, call.start, f"{UNREACHABLE}: {exc}")
        except (OSError, aioredis.RedisError) as exc:
            return _result(req, call.start, f"{UNREACHABLE}: {type(exc).__name__}: {exc}")
        except asyncio.CancelledError:
            await asyncio.shield(self._stop(call))
            raise
        finally:
            if self._running.get(req.call_id) is call:
                del self._running[req.call_id]
            if not self._running:
                self._idle.set()
            self._results.forget(call.task_id)

    def running_task_id(self, call_id: str) -> str | None:
        """The Celery task id a running call was sent as (for logs and fault-injection tests)."""
        call = self._running.get(call_id)
        return call.task_id or None if call is not None else None

    async def cancel(self, call_id: str) -> None:
        call = self._running.get(call_id)
        if call is not None:
            call.cancel.set()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        for call in list(self._running.values()):
            call.cancel.set()
        if self._running:
            await self._idle.wait()
        if self._drops:
            await asyncio.gather(*self._drops, return_exceptions=True)
        await self._results.aclose()
        await self._redis.aclose()
        await asyncio.to_thread(self._app.close)

    # -- one call ---------------------------------------------------------------------------

    async def _run(self, call: _Call) -> ToolResult:
        for _ in range(_MAX_RESENDS + 1):
            fut = await self._send(call)
            outcome = await self._wait(call, fut)
            if outcome is not None:
                self._drop_soon(call.task_id)
                return outcome
            # A read-only call whose worker died: its old message is abandoned; send it again.
            self._results.forget(call.task_id)
        return _result(call.req, call.start, f"tool worker lost {_MAX_RESENDS + 1} times; gave up")

    async def _send(self, call: _Call) -> asyncio.Future[bytes]:
        call.task_id = f"{self._prefix}.{uuid.uuid4().hex}"
        fut = await self._results.expect(call.task_id)
        req = call.req
        if req.route is None:  # routed() in run() sets it
            raise RouteError("the call was not routed")
        try:
            await asyncio.wait_for(
                asyncio.to_thread(self._publish, req, req.route.queue, call.task_id),
                _SEND_TIMEOUT_S,
            )
        except TimeoutError as exc:
            raise _Unreachable(f"sending the call took over {_SEND_TIMEOUT_S:g} s") from exc
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # kombu/redis raise many types for "cannot connect"
            raise _Unreachable(f"cannot send the call to {self._broker_shown}: {exc}") from exc
        return fut

    def _drop_soon(self, task_id: str) -> None:
        """Delete a result once read, beside the caller's next steps rather than before them:
        the round trip was a third of what a call costs over a bare Celery task
        (bench/dispatch.py). `aclose` waits for the deletions still in flight."""
        task = asyncio.create_task(self._drop_result(task_id), name="celery-drop-result")
        self._drops.add(task)
        task.add_done_callback(self._drops.discard)

    async def _drop_result(self, task_id: str) -> None:
        """Delete a result once read: its file contents and command output must not stay
        readable in Redis (the worker's result_expires is only the ceiling for unread ones)."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                self._redis.delete(f"{self._key_prefix}{task_id}"), _SEND_TIMEOUT_S
            )

    def _publish(self, req: ToolRequest, queue: str, task_id: str) -> None:
        """Send the task message: what `Celery.send_task` does, less the result subscription it
        makes per task (a SUBSCRIBE before the message goes out, an UNSUBSCRIBE when its result
        object is dropped, on a connection nobody reads here): the one pattern subscription of
        `_Results` receives every result."""
        amqp = self._app.amqp
        message = amqp.create_task_message(
            task_id,
            TASK_NAME,
            [req.model_dump(mode="json")],
            {},
            time_limit=req.timeout_s + HARD_LIMIT_EXTRA_S,
            soft_time_limit=req.timeout_s,
            # What logs and monitoring show instead of the arguments (file contents...).
            argsrepr=f"[{req.tool} call {req.call_id} session {req.session_id}]",
            kwargsrepr="{}",
        )
        with self._app.producer_or_acquire() as producer:
            amqp.send_task_message(producer, TASK_NAME, message, queue=queue)

    async def _wait(self, call: _Call, fut: asyncio.Future[bytes]) -> ToolResult | None:
        """The call's result, or None when a read-only call must be sent again."""
        req, task_id = call.req, call.task_id
        sent = time.monotonic()
        started: float | None = None
        holder: str | None = None
        next_ping = sent + self._pickup_timeout_s
        cancel_wait: asyncio.Future[Any] = asyncio.ensure_future(call.cancel.wait())
        watched: set[asyncio.Future[Any]] = {fut, cancel_wait}
        try:
            while True:
                await asyncio.wait(watched, timeout=_POLL_S, return_when="FIRST_COMPLETED")
                if fut.done():
                    return self._decode(call, fut.result())
                if call.cancel.is_set():
                    await self._stop(call)
                    return _result(req, call.start, "cancelled")
                stored, claim, alive = await self._state(task_id)
                if stored is not None:
                    return self._decode(call, stored)
                now = time.monotonic()
                if claim is None:
                    if now >= next_ping:
                        await self._check_consumers(call)
                        next_ping = now + 2 * self._pickup_timeout_s
                    if now - sent > self._queue_timeout_s and await self._abandon(task_id):
                        queue = req.route.queue if req.route is not None else "?"
                        return _result(
                            req,
                            call.start,
                            f"no tool worker picked the call up in {now - sent:.0f} s "
                            f"(queue {queue}: its workers are all busy or stuck)",
                        )
                    continue
                if claim == ABANDONED:
                    return _result(req, call.start, "cancelled")
                if started is None or claim != holder:  # first seen, or started again
                    holder, started = claim, now
                if not alive:
                    if not call.read_only:
                        return _result(req, call.start, lost_worker_error(req.tool, req.call_id))
                    await self._redis.set(claim_key(task_id), ABANDONED, ex=3600)
                    return None
                if now - started > req.timeout_s + HARD_LIMIT_EXTRA_S + _REPORT_GRACE_S:
                    await self._stop(call)
                    return _result(
                        req, call.start, f"timed out after {req.timeout_s:g} s (no worker report)"
                    )
        finally:
            cancel_wait.cancel()

    async def _state(self, task_id: str) -> tuple[bytes | None, str | None, bool]:
        pipe = self._redis.pipeline(transaction=False)
        pipe.get(f"{self._key_prefix}{task_id}")
        pipe.get(claim_key(task_id))
        pipe.exists(alive_key(task_id))
        stored, claim, alive = await pipe.execute()
        return stored, _text(claim), bool(alive)

    def _decode(self, call: _Call, payload: bytes) -> ToolResult:
        req = call.req
        meta: dict[str, Any] = self._app.backend.decode(payload)
        status = meta.get("status")
        value = meta.get("result")
        if status == "SUCCESS" and isinstance(value, dict):
            return ToolResult.model_validate(value)
        if status == "REVOKED":
            return _result(req, call.start, "cancelled")
        exc_type = value.get("exc_type") if isinstance(value, dict) else None
        message = value.get("exc_message") if isinstance(value, dict) else value
        if isinstance(message, list | tuple):
            message = " ".join(str(m) for m in message)
        if exc_type == "WorkerLostError":
            return _result(req, call.start, lost_worker_error(req.tool, req.call_id))
        if exc_type == "TimeLimitExceeded":
            return _result(
                req, call.start, f"timed out after {req.timeout_s:g} s (hard time limit)"
            )
        return _result(req, call.start, f"tool worker failed: {exc_type or status}: {message}")

    async def _abandon(self, task_id: str) -> bool:
        """Claim a call for nobody; True when no process had started it (it never will)."""
        return bool(await self._redis.set(claim_key(task_id), ABANDONED, nx=True, ex=3600))

    async def _stop(self, call: _Call) -> None:
        """Stop the call wherever it is; returns once its processes are dead (or after a grace)."""
        if not call.task_id:
            return
        with contextlib.suppress(Exception):
            if await self._abandon(call.task_id):
                return
            await asyncio.wait_for(
                asyncio.to_thread(
                    self._app.control.revoke, call.task_id, terminate=True, signal="SIGKILL"
                ),
                _SEND_TIMEOUT_S,
            )
            # The worker stores REVOKED after it has killed the call's processes.
            deadline = time.monotonic() + _CANCEL_GRACE_S
            while time.monotonic() < deadline:
                stored, _, _ = await self._state(call.task_id)
                if stored is not None:
                    return
                await asyncio.sleep(0.05)

    async def _check_consumers(self, call: _Call) -> None:
        """Raise when no worker will ever take the call (it is abandoned first, so none does)."""
        req = call.req
        queue = req.route.queue if req.route is not None else ""
        try:
            found = await consumers(self._app)
        except Exception as exc:  # kombu's connection errors
            raise _Unreachable(f"cannot ask the workers: {exc}") from exc
        if found.serving(queue):
            return  # queued behind other calls: keep waiting (up to the queue timeout)
        if not await self._abandon(call.task_id):
            return  # a worker took it after all
        if not found.nodes:
            raise _Unreachable("no worker answered (is the worker running?)")
        raise _NoConsumer(no_consumer_error(req, found))
