"""Finding 3: native Redis had no password, every queued call carried the gateway key, results
stayed readable for an hour, and the worker ran calls in any directory.

Against a real redis-server and a real Celery worker, as a local process would attack them: without
the password nothing can be queued or read; a call for a workspace the worker was not given is
refused; only a web tool's call holds the gateway key, so the message of any other call in the
queue holds none (and the worker holds no key of its own: compose gives it none); a result the
agent has read is gone from Redis. The native stack gives redis-server its password in a 0600
config file, never on the command line (`ps` shows every local user the command lines).
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from openmono.executor import LocalExecutor
from openmono.llm import ToolCallComplete
from openmono.loop import DispatchContext, Dispatcher, ToolCatalog, WorkerTools
from openmono.permissions import PermissionEngine
from openmono.stack.services import REDIS
from openmono.stack.settings import StackSettings
from openmono.stack.spec import Context
from openmono_contracts import ToolRequest, WebAccess
from openmono_contracts.redisauth import ping
from openmono_contracts.routing import ensure_workspace_id, route_for
from openmono_worker import WorkerSettings

from tests.support.celery_worker import WorkerStack, celery_executor, tool_request, worker_stack

pytestmark = pytest.mark.integration

GATEWAY_KEY = "gateway-key-that-must-never-be-queued-3f9a"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerStack]:
    tmp = tmp_path_factory.mktemp("redis-auth")
    given = tmp / "given"
    given.mkdir()
    with worker_stack(tmp, concurrency=1, env={"WORKER_ROOTS": str(given)}) as ws:
        yield ws


def test_without_the_password_nothing_is_queued_or_read(stack: WorkerStack) -> None:
    port = stack.redis.port
    # a local process speaking Redis's protocol: queue a call, read the results
    assert _raw(port, b"LPUSH", b"openmono.tools.box.any", b"{}").startswith(b"-NOAUTH")
    assert _raw(port, b"KEYS", b"celery-task-meta-*").startswith(b"-NOAUTH")
    assert _raw(port, b"AUTH", b"wrong-guess").startswith(b"-WRONGPASS")
    assert ping("127.0.0.1", port, stack.redis.password) == b"+PONG"
    # the clients add REDIS_PASSWORD to the configured URL, which stays without it
    cfg = WorkerSettings(broker_url=stack.redis.bare_url, redis_password=stack.redis.password)
    assert cfg.broker_url == stack.redis.url


async def test_a_workspace_the_worker_was_not_given_is_refused(
    stack: WorkerStack, tmp_path: Path
) -> None:
    given = stack.worker.env["WORKER_ROOTS"]
    async with celery_executor(stack.redis.url) as ex:
        inside = await ex.run(tool_request("Bash", {"command": "echo ran"}, Path(given) / "p"))
        outside = await ex.run(tool_request("Bash", {"command": "touch ran"}, tmp_path / "other"))
    assert inside.ok and "ran" in inside.output, inside
    assert not outside.ok and outside.error_kind == "denied", outside
    assert "not inside the folders this worker was given" in (outside.error or "")
    assert "WORKER_ROOTS" in (outside.error or "")
    assert not (tmp_path / "other" / "ran").exists()


def _as_the_agent_builds_it(tool: str, params: dict[str, object], ws: Path) -> ToolRequest:
    """The request the agent's dispatcher makes for a call of `tool` in a session whose web access
    holds the gateway key, routed as the Celery executor sends it."""
    ctx = DispatchContext(
        workspace=ws,
        session_id="s",
        timeout_s=30,
        web=WebAccess(gateway="http://127.0.0.1:9", api_key=GATEWAY_KEY),
    )
    executor = LocalExecutor(WorkerSettings())
    dispatcher = Dispatcher(ToolCatalog([WorkerTools(executor)]), PermissionEngine(ws), ctx)
    call = ToolCallComplete(index=0, id="c-1", name=tool, arguments=json.dumps(params))
    req = dispatcher.request(call, dict(params))
    return req.model_copy(update={"route": route_for(ws)})


def test_only_a_web_tool_gets_the_gateway_key(tmp_path: Path) -> None:
    # the key goes where it is needed (WebSearch, WebFetch send it to the gateway), nowhere else
    for tool, params in (("Bash", {"command": "env"}), ("FileRead", {"file_path": "a"})):
        assert _as_the_agent_builds_it(tool, params, tmp_path).web.api_key is None, tool
    for tool, params in (("WebSearch", {"query": "x"}), ("WebFetch", {"url": "http://a.test"})):
        assert _as_the_agent_builds_it(tool, params, tmp_path).web.api_key == GATEWAY_KEY, tool


async def test_a_queued_call_holds_no_gateway_key(stack: WorkerStack, tmp_path: Path) -> None:
    # a workspace with an id routes to its own queue, which no worker here consumes: the message
    # stays in Redis where a reader could look at it
    ws = tmp_path / "unserved"
    ws.mkdir()
    ensure_workspace_id(ws)
    req = _as_the_agent_builds_it("Bash", {"command": "env"}, ws)
    assert req.route is not None
    async with celery_executor(stack.redis.url, pickup_timeout_s=30) as ex:
        call = asyncio.ensure_future(ex.run(req))
        try:
            raw = await _queued_message(stack, req.route.queue)
        finally:
            await ex.cancel(req.call_id)
            await asyncio.wait_for(call, 30)
    body = base64.b64decode(json.loads(raw)["body"])
    assert req.call_id.encode() in body  # it is this call's message, decoded
    assert GATEWAY_KEY.encode() not in raw and GATEWAY_KEY.encode() not in body


async def test_a_read_result_is_gone(stack: WorkerStack) -> None:
    ws = Path(stack.worker.env["WORKER_ROOTS"]) / "read"
    ws.mkdir(exist_ok=True)
    (ws / "secret.txt").write_text("file contents a reader must not find later\n")
    async with celery_executor(stack.redis.url) as ex:
        result = await ex.run(tool_request("FileRead", {"file_path": "secret.txt"}, ws))
    assert result.ok and "must not find" in result.output, result
    with stack.redis.client() as c:
        left = [
            k for k in c.scan_iter("celery-task-meta-*") if c.get(k) and b"must not" in c.get(k)
        ]
    assert left == []
    # the ceiling for a result nobody reads
    assert WorkerSettings().result_expires_s <= 300


def test_the_native_stack_keeps_the_password_off_the_command_line(tmp_path: Path) -> None:
    password = "native-redis-password-7c1e"
    settings = StackSettings(
        openmono_broker_url="redis://127.0.0.1:6390/0",
        openmono_data_dir=tmp_path,
        redis_password=password,
    )
    command = REDIS.command(Context(root=tmp_path, settings=settings))
    assert all(password not in arg for arg in command)
    config = Path(command[1])
    assert password in config.read_text()
    assert stat.S_IMODE(config.stat().st_mode) == 0o600


def _raw(port: int, *command: bytes) -> bytes:
    """One command, without logging in; Redis's first reply line."""
    wire = b"*%d\r\n" % len(command) + b"".join(b"$%d\r\n%s\r\n" % (len(c), c) for c in command)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(wire)
        return sock.recv(256).split(b"\r\n")[0]


async def _queued_message(stack: WorkerStack, queue: str) -> bytes:
    for _ in range(500):
        with stack.redis.client() as c:
            found = c.lrange(queue, 0, -1)
        if found:
            return bytes(found[0])
        await asyncio.sleep(0.02)
    raise AssertionError(f"no message appeared on {queue}")
