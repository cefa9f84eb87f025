"""Several real workers on one real Redis: a call reaches only a worker that has its workspace.

Three prefork workers (concurrency 1), two workspaces, one Redis:

    A1, A2   WORKER_WORKSPACES=<ws-a>     (the same folder: `--scale worker=2` in miniature)
    B        WORKER_WORKSPACES=<ws-b>     (another checkout, as on another box)

Each worker's environment carries a mark (`ROUTE_TEST_MARK`) that a Bash call echoes, so which
worker ran a call is a fact the call itself reports, and FileWrite results are checked on disk.
1. calls from agent A only touch ws-a and run on A1/A2; agent B's only ws-b and B;
2. A1 and A2 share ws-a's calls: two reads held open at once are held by both workers, and so
   are two held writes sent one after the other; a busy worker leaves the next call in Redis;
3. a forged or misrouted message is refused by the worker (an error result, the file untouched),
   and so is a call on a folder whose id file was replaced after the worker started;
4. a workspace no worker serves: a clear error naming it and its queue, within seconds; the
   doctor's "workers" line says who serves a workspace;
5. a worker whose WORKER_WORKSPACES cannot serve stops at once with the reason.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from openmono.executor.celery import CeleryExecutor, route_report
from openmono_contracts import Route, ToolRequest, ToolResult
from openmono_contracts.routing import (
    WORKSPACE_ID_FILE,
    ensure_workspace_id,
    read_workspace_id,
    route_for,
)
from openmono_worker import WorkerSettings
from openmono_worker.celery_app import TASK_NAME, create_app

from tests.support.celery_worker import (
    LOOPBACK_FETCH,
    WorkerProc,
    await_worker,
    claim_holder,
    launch_worker,
    tool_request,
    wait_for,
)
from tests.support.gated_pages import GatedPages
from tests.support.procs import free_port, stop_all
from tests.support.redis import RedisServer, start_redis

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@dataclass
class Fleet:
    redis: RedisServer
    ws_a: Path
    ws_b: Path
    a1: WorkerProc
    a2: WorkerProc
    b: WorkerProc

    def owner_of(self, pid: int) -> str:
        for name in ("a1", "a2", "b"):
            worker: WorkerProc = getattr(self, name)
            if pid in worker.pool_pids():
                return name
        raise AssertionError(f"pid {pid} is in no worker's pool")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    tmp = tmp_path_factory.mktemp("routing")
    ws_a, ws_b = tmp / "ws-a", tmp / "ws-b"
    ws_a.mkdir()
    ws_b.mkdir()
    server = start_redis(tmp)
    started: list[WorkerProc] = []
    try:
        # all three start at once (a1 and a2 race for ws-a's id file, as replicas do)
        for mark, ws in (("a1", ws_a), ("a2", ws_a), ("b", ws_b)):
            env = {**LOOPBACK_FETCH, "WORKER_WORKSPACES": str(ws), "ROUTE_TEST_MARK": mark}
            started.append(launch_worker(tmp, server.url, concurrency=1, env=env))
        for worker in started:
            await_worker(worker)
        yield Fleet(server, ws_a, ws_b, *started)
    finally:
        stop_all([w.proc for w in started])
        server.proc.stop()


@pytest.fixture
async def executor(fleet: Fleet) -> AsyncIterator[CeleryExecutor]:
    # A short pickup timeout: "nobody serves this workspace" is asked after 1 s, not 5.
    ex = CeleryExecutor(fleet.redis.url, pickup_timeout_s=1.0)
    yield ex
    await ex.aclose()


def _send_raw(fleet: Fleet, req: ToolRequest, queue: str) -> ToolResult:
    """Put a message on `queue` the way anyone with access to Redis could, and wait for it."""
    app = create_app(WorkerSettings(broker_url=fleet.redis.url))
    try:
        res = app.send_task(TASK_NAME, args=[req.model_dump(mode="json")], queue=queue)
        return ToolResult.model_validate(res.get(timeout=60))
    finally:
        app.close()


def test_routing_workers_gave_each_workspace_one_id(fleet: Fleet) -> None:
    id_a, id_b = read_workspace_id(fleet.ws_a), read_workspace_id(fleet.ws_b)
    assert id_a and id_b and id_a != id_b
    # A1 and A2 raced to create ws-a's id at startup; the one file left is the one both use.
    assert sorted(p.name for p in (fleet.ws_a / WORKSPACE_ID_FILE).parent.iterdir()) == [
        "workspace-id"
    ]
    assert route_for(fleet.ws_a) == Route(kind="workspace", id=id_a)
    assert route_for(fleet.ws_b / "sub" / "dir") == Route(kind="workspace", id=id_b)


async def test_routing_each_workspace_calls_run_on_its_own_workers(
    fleet: Fleet, executor: CeleryExecutor
) -> None:
    agent_b = CeleryExecutor(fleet.redis.url)
    try:
        calls: list[tuple[str, Path, ToolRequest]] = []
        for i in range(6):
            for name, ws in (("a", fleet.ws_a), ("b", fleet.ws_b)):
                content = f"written by agent {name} #{i}\n"
                calls.append((name, ws, tool_request("FileWrite", _write(i, content), ws)))
                calls.append((name, ws, tool_request("Bash", _mark(i), ws)))
        results = await asyncio.gather(
            *((executor if name == "a" else agent_b).run(req) for name, _, req in calls)
        )
    finally:
        await agent_b.aclose()
    for (name, _, req), result in zip(calls, results, strict=True):
        assert result.ok, (req.tool, result)
        if req.tool == "Bash":
            ran_on = result.output.splitlines()[0]
            assert ran_on in (("a1", "a2") if name == "a" else ("b",)), (name, result.output)
    for name, ws in (("a", fleet.ws_a), ("b", fleet.ws_b)):
        other = fleet.ws_b if name == "a" else fleet.ws_a
        for i in range(6):
            assert (ws / f"out-{i}.txt").read_text() == f"written by agent {name} #{i}\n"
        marks = {p.read_text().strip() for p in ws.glob("ran-*.txt")}
        assert marks <= ({"a1", "a2"} if name == "a" else {"b"}), marks
        # Nothing of this agent's ever landed in the other workspace.
        assert all(f"agent {name} " not in p.read_text() for p in other.glob("out-*.txt")), name


def _write(i: int, content: str) -> dict[str, object]:
    return {"file_path": f"out-{i}.txt", "content": content}


def _mark(i: int) -> dict[str, object]:
    return {"command": f'echo "$ROUTE_TEST_MARK" | tee ran-{i}.txt'}


async def test_routing_workers_on_one_workspace_share_its_calls(
    fleet: Fleet, executor: CeleryExecutor
) -> None:
    """Two reads held open together on ws-a: with concurrency 1 each, A1 holds one, A2 the other."""
    pages = GatedPages()
    try:
        calls = [tool_request("WebFetch", {"url": f"{pages.url}/p{i}"}, fleet.ws_a) for i in (1, 2)]
        tasks = [asyncio.ensure_future(executor.run(c)) for c in calls]
        await asyncio.to_thread(pages.wait_count, 2)  # both in flight at the same moment
        holders = set()
        for call in calls:
            task_id = executor.running_task_id(call.call_id)
            assert task_id is not None
            holders.add(fleet.owner_of(claim_holder(fleet.redis, task_id)))
        assert holders == {"a1", "a2"}
        pages.release.set()
        results = await asyncio.wait_for(asyncio.gather(*tasks), 60)
        assert all(r.ok and "page /p" in r.output for r in results), results
    finally:
        pages.release.set()
        pages.close()


async def test_routing_a_busy_worker_leaves_the_next_write_to_an_idle_one(
    fleet: Fleet, executor: CeleryExecutor
) -> None:
    """Two held Bash calls on ws-a, the second sent while the first runs: they run at the same
    time, one on each of A1 and A2 (the busy one does not sit on the second)."""
    tag = uuid.uuid4().hex[:6]
    release = fleet.ws_a / f"release-{tag}"
    script = (
        f"touch started-{tag}-$N; while [ ! -e {release.name} ]; do sleep 0.05; done; "
        'echo "$ROUTE_TEST_MARK"'
    )
    calls = [tool_request("Bash", {"command": f"N={i}; {script}"}, fleet.ws_a, 60) for i in (1, 2)]
    started = [fleet.ws_a / f"started-{tag}-{i}" for i in (1, 2)]
    tasks: list[asyncio.Future[ToolResult]] = []
    try:
        # One at a time: the second is sent while the first runs, the moment a busy worker
        # could pull it.
        for call, mark in zip(calls, started, strict=True):
            tasks.append(asyncio.ensure_future(executor.run(call)))
            deadline = time.monotonic() + 30
            while not mark.exists():
                assert time.monotonic() < deadline, "a write waited behind the other one"
                assert not any(t.done() for t in tasks), [t.result() for t in tasks if t.done()]
                await asyncio.sleep(0.05)
    finally:
        release.touch()
    results = await asyncio.wait_for(asyncio.gather(*tasks), 60)
    assert all(r.ok for r in results), results
    assert {r.output.splitlines()[0] for r in results} == {"a1", "a2"}, results


async def test_routing_a_busy_worker_holds_no_waiting_call(
    fleet: Fleet, executor: CeleryExecutor
) -> None:
    """B (concurrency 1) runs a held write; the next call on ws-b stays in Redis for any worker
    that can start it, instead of waiting inside B. (A side-effecting call is acknowledged when
    it starts, which frees its prefetch slot; measured here, Celery 5.7 with prefetch 1 still
    does not pull another message while the pool is full: this test guards that.)"""
    id_b = read_workspace_id(fleet.ws_b)
    queue = f"openmono.tools.ws.{id_b}"
    tag = uuid.uuid4().hex[:6]
    release = fleet.ws_b / f"release-{tag}"
    held = f"touch started-{tag}; while [ ! -e {release.name} ]; do sleep 0.05; done"
    first = asyncio.ensure_future(
        executor.run(tool_request("Bash", {"command": held}, fleet.ws_b, 60))
    )
    second: asyncio.Future[ToolResult] | None = None
    try:
        while not (fleet.ws_b / f"started-{tag}").exists():
            assert not first.done(), first.result()
            await asyncio.sleep(0.05)
        second = asyncio.ensure_future(
            executor.run(tool_request("Bash", {"command": "echo second"}, fleet.ws_b))
        )
        # B polls its queue about once a second: over 3 s, a worker that prefetched would
        # have taken the message out of Redis.
        with fleet.redis.client() as c:
            await wait_for(lambda: c.llen(queue) == 1, 10, "the second call queued")
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                assert c.llen(queue) == 1, "the busy worker pulled the next call"
                await asyncio.sleep(0.1)
    finally:
        release.touch()
    results = await asyncio.wait_for(asyncio.gather(first, second), 60)
    assert all(r.ok for r in results), results


async def test_routing_forged_and_misrouted_calls_are_refused(fleet: Fleet, tmp_path: Path) -> None:
    id_a = read_workspace_id(fleet.ws_a)
    assert id_a is not None
    route_a = Route(kind="workspace", id=id_a)

    def forged(ws: Path, route: Route | None, name: str) -> ToolRequest:
        req = tool_request("FileWrite", {"file_path": name, "content": "forged\n"}, ws)
        return req.model_copy(update={"route": route})

    # ws-b's files, claimed to be ws-a's, put on ws-a's queue: A1/A2 do not have them there.
    wrong_path = await asyncio.to_thread(
        _send_raw, fleet, forged(fleet.ws_b, route_a, "f1.txt"), route_a.queue
    )
    assert not wrong_path.ok and "refused by tool worker" in (wrong_path.error or "")
    assert "is not inside" in (wrong_path.error or ""), wrong_path
    assert not (fleet.ws_b / "f1.txt").exists()

    # No route at all (an old or foreign sender).
    no_route = await asyncio.to_thread(
        _send_raw, fleet, forged(fleet.ws_a, None, "f2.txt"), route_a.queue
    )
    assert not no_route.ok and "names no route" in (no_route.error or ""), no_route
    assert not (fleet.ws_a / "f2.txt").exists()

    # ws-b's route, put on ws-a's queue: the queue it came from is not the one it names.
    b_req = tool_request("FileWrite", {"file_path": "f3.txt", "content": "x"}, fleet.ws_b)
    misrouted = await asyncio.to_thread(_send_raw, fleet, b_req, route_a.queue)
    assert not misrouted.ok and "was delivered on" in (misrouted.error or ""), misrouted
    assert not (fleet.ws_b / "f3.txt").exists()

    # A box route, forged onto ws-a's queue: workspace-mode workers never take box calls.
    box = tool_request("FileWrite", {"file_path": "f4.txt", "content": "x"}, tmp_path / "ws")
    assert box.route is not None and box.route.kind == "box"
    forged_box = box.model_copy(update={"route": Route(kind="box", id=id_a)})
    box_on_a = await asyncio.to_thread(_send_raw, fleet, forged_box, route_a.queue)
    assert not box_on_a.ok and "refused by tool worker" in (box_on_a.error or ""), box_on_a

    # The same request, sent the right way, runs.
    fine = await asyncio.to_thread(
        _send_raw, fleet, forged(fleet.ws_a, route_a, "f5.txt"), route_a.queue
    )
    assert fine.ok, fine
    assert (fleet.ws_a / "f5.txt").read_text() == "forged\n"


async def test_routing_a_replaced_workspace_id_is_refused(
    fleet: Fleet, executor: CeleryExecutor
) -> None:
    """ws-b's id file swapped or removed after the worker started: not the files it serves."""
    path = fleet.ws_b / WORKSPACE_ID_FILE
    old = path.read_text()
    try:
        path.write_text(uuid.uuid4().hex + "\n")
        req = tool_request("FileWrite", {"file_path": "swapped.txt", "content": "x"}, fleet.ws_b)
        b_route = Route(kind="workspace", id=old.strip())
        result = await asyncio.to_thread(
            _send_raw, fleet, req.model_copy(update={"route": b_route}), b_route.queue
        )
        assert not result.ok and "now holds workspace id" in (result.error or ""), result
        assert not (fleet.ws_b / "swapped.txt").exists()
        path.unlink()
        result = await asyncio.to_thread(
            _send_raw, fleet, req.model_copy(update={"route": b_route}), b_route.queue
        )
        assert not result.ok and "has no workspace id any more" in (result.error or ""), result
        assert not (fleet.ws_b / "swapped.txt").exists()
    finally:
        path.write_text(old)


async def test_routing_no_worker_for_a_workspace_is_a_clear_bounded_error(
    fleet: Fleet, executor: CeleryExecutor, tmp_path: Path
) -> None:
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    lonely_id = ensure_workspace_id(lonely)
    start = time.monotonic()
    result = await executor.run(
        tool_request("FileWrite", {"file_path": "x.txt", "content": "x"}, lonely)
    )
    took = time.monotonic() - start
    error = result.error or ""
    assert not result.ok
    assert f"no tool worker serves workspace {lonely}" in error, error
    assert f"openmono.tools.ws.{lonely_id}" in error and "3 worker(s) online" in error, error
    assert f"WORKER_WORKSPACES={lonely}" in error, error
    assert took < 15, took  # pickup timeout 1 s + one inspect round; generous on a loaded box
    assert not (lonely / "x.txt").exists()

    # Without an id file the call is for this box; no box-mode worker runs here either.
    plain = tmp_path / "plain"
    result = await executor.run(tool_request("ListDirectory", {}, plain))
    assert not result.ok and "on this box" in (result.error or ""), result
    assert "openmono.tools.box." in (result.error or ""), result


def test_routing_a_root_that_cannot_serve_stops_the_worker(tmp_path: Path) -> None:
    missing = tmp_path / "not-there"
    cmd = [sys.executable, "-m", "openmono_worker", "--hostname", "bad@127.0.0.1"]
    env = {"PATH": "/usr/bin:/bin", "WORKER_WORKSPACES": str(missing), "HOME": str(tmp_path)}
    env["OPENMONO_BROKER_URL"] = "redis://127.0.0.1:9/0"  # never reached: it stops before
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0
    assert f"WORKER_WORKSPACES: {missing} is not an existing directory" in done.stderr


async def test_routing_doctor_reports_who_serves_the_workspace(
    fleet: Fleet, tmp_path: Path
) -> None:
    ok, detail = await route_report(fleet.redis.url, fleet.ws_a / "sub")
    assert ok, detail
    assert detail.startswith("2 serve workspace"), detail
    assert fleet.a1.node in detail and fleet.a2.node in detail and fleet.b.node not in detail
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    ensure_workspace_id(lonely)
    ok, detail = await route_report(fleet.redis.url, lonely)
    assert not ok and "no tool worker serves" in detail, detail


def test_routing_openmono_doctor_names_the_workers_of_the_workspace(
    fleet: Fleet, tmp_path: Path
) -> None:
    """The CLI itself: a `workers` line, then the worker-side workspace probe (or not)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENMONO_", "WORKER_"))}
    env.update(
        OPENMONO_DATA_DIR=str(tmp_path / "data"),
        OPENMONO_BROKER_URL=fleet.redis.url,
        OPENMONO_LLM_ENDPOINT=f"http://127.0.0.1:{free_port()}",  # nothing there: fails fast
        HOME=str(tmp_path),
    )
    openmono = str(Path(sys.executable).parent / "openmono")

    def doctor(cwd: Path) -> str:
        done = subprocess.run(
            [openmono, "doctor"], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
        )
        return done.stdout

    out = doctor(fleet.ws_a)
    assert "✓ workers: 2 serve workspace" in out, out
    assert f"✓ workspace: {fleet.ws_a} in the worker" in out, out
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    ensure_workspace_id(lonely)
    out = doctor(lonely)
    assert "✗ workers: no tool worker serves workspace" in out, out
    assert "in the worker" not in out, out  # no probe that could only time out
