"""`docker compose --profile agent up -d --scale worker=2 worker`: two workers on one folder.

The user's command on the shipped compose file (the worker image under a test tag of its own). Both
replicas must come up healthy (no container name or host port in the way), agree on the one id of
the bind-mounted workspace (whichever started first wrote it), consume that id's queue, and run
calls that land in the host's folder. Calls are sent from inside the compose network (Redis has no
published port), the way the agent container sends them; which replica ran each call is the
`hostname` a Bash call prints. That both replicas get some of the calls is proven natively, where
the test can hold calls open (tests/integration/test_worker_routing.py); here both consume the
queue, as Celery itself reports it.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from openmono.stack.envfile import ensure_compose_env

from tests.containers.conftest import Project, health, inspect_container, make_env
from tests.support import bash_load
from tests.support.procs import ROOT

pytestmark = [pytest.mark.containers, pytest.mark.slow]

FILES = ("compose.yaml", "tests/containers/compose.scale.yml")

# Run inside worker #1 (python from the worker image): ask who consumes what, then send calls.
PROBE = r"""
import json, uuid
from openmono_contracts import ToolRequest, ToolResult
from openmono_contracts.routing import Route, route_for
from openmono_worker import WorkerSettings
from openmono_worker.celery_app import TASK_NAME, create_app

app = create_app(WorkerSettings())
route = route_for("/workspace")
queues = app.control.inspect(timeout=3).active_queues() or {}
def call(tool, params, named=route):
    req = ToolRequest(tool=tool, params=params, call_id=uuid.uuid4().hex[:8], session_id="scale",
                      workspace="/workspace", timeout_s=30, route=named)
    return app.send_task(TASK_NAME, args=[req.model_dump(mode="json")], queue=route.queue)
pending = [call("FileWrite", {"file_path": f"scaled-{i}.txt", "content": f"call {i}\n"})
           for i in range(6)]
pending += [call("Bash", {"command": "sleep 0.3; hostname"}) for _ in range(8)]
# another workspace's route on this queue: refused, not run against /workspace
forged = call("FileWrite", {"file_path": "forged.txt", "content": "x"},
              named=Route(kind="workspace", id="0" * 32))
results = [ToolResult.model_validate(p.get(timeout=60)) for p in pending]
refused = ToolResult.model_validate(forged.get(timeout=60))
print(json.dumps({
    "route": route.model_dump(),
    "queues": {n: [q["name"] for q in qs] for n, qs in queues.items()},
    "ok": [r.ok for r in results],
    "ran_on": sorted({r.output.splitlines()[0] for r in results[6:]}),
    "forged": refused.model_dump(),
}))
"""


def _containers(p: Project) -> list[str]:
    return p.containers("worker", "agent")


@pytest.fixture(scope="module")
def scaled(images: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    name = f"omtest-{uuid.uuid4().hex[:8]}"
    env = make_env(tmp_path_factory.mktemp(name), name, ROOT / "models")
    p = Project(name, env, FILES)
    try:
        p.run("--profile", "agent", "build", "worker")
        start = time.monotonic()
        p.run("--profile", "agent", "up", "-d", "--scale", "worker=2", "worker")
        deadline = start + 240
        while True:
            states = [health(c) for c in _containers(p)]
            if len(states) == 2 and all(s == "healthy" for s in states):
                break
            if time.monotonic() > deadline:
                logs = p.logs("worker")[-4000:]
                raise AssertionError(f"workers {states} after 240 s:\n{logs}")
            time.sleep(1)
        print(f"\n2 workers healthy in {time.monotonic() - start:.1f} s")
        yield p
    finally:
        p.down()


def test_scaled_workers_share_one_workspace_id_and_queue(scaled: Project) -> None:
    workspace = Path(scaled.env["WORKSPACE_DIR"])
    id_file = workspace / ".openmono" / "workspace-id"
    ws_id = id_file.read_text().strip()
    assert [p.name for p in id_file.parent.iterdir()] == ["workspace-id"]  # one winner, no temp

    done = scaled.exec("worker", "python", "-c", PROBE, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    queue = f"openmono.tools.ws.{ws_id}"
    assert report["route"] == {"kind": "workspace", "id": ws_id}
    # Both replicas consume the workspace's tool queue, nothing else (crawl slices are the scrape
    # worker's: openmono_scrape.worker).
    assert len(report["queues"]) == 2, report["queues"]
    wanted = [queue]
    assert all(sorted(qs) == wanted for qs in report["queues"].values()), report["queues"]
    assert all(report["ok"]), report
    hostnames = {str(inspect_container(c)["Config"]["Hostname"]) for c in _containers(scaled)}  # type: ignore[index]
    assert set(report["ran_on"]) <= hostnames and report["ran_on"], report
    for i in range(6):
        assert (workspace / f"scaled-{i}.txt").read_text() == f"call {i}\n"
    assert not report["forged"]["ok"] and "refused by tool worker" in report["forged"]["error"]
    assert not (workspace / "forged.txt").exists()


def test_the_worker_service_can_be_scaled(engine: None, tmp_path: Path) -> None:
    """`docker compose config` level: nothing in the worker block pins one container."""
    env = tmp_path / ".env"
    ensure_compose_env(env, ROOT / "compose" / ".env.example")
    worker = Project("omcfg", env).compose("agent", timeout=60).get_config()["services"]["worker"]
    assert "container_name" not in worker
    assert not worker.get("ports")
    assert worker["environment"]["WORKER_WORKSPACES"] == "/workspace"
    # the healthcheck pings the replica's own node (its hostname), whichever replica it is
    assert "openmono@$$HOSTNAME" in " ".join(worker["healthcheck"]["test"])


def _load(container: str, *args: str, timeout: float = 600) -> dict[str, object]:
    """tests/support/bash_load.py run inside `container` by the image's own python."""
    done = subprocess.run(
        ["docker", "exec", "-i", container, "python", "-", *args],
        input=Path(bash_load.__file__).read_text(), capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def test_scaled_workers_leave_no_zombie_after_200_bash_calls(scaled: Project) -> None:
    """tests/integration/test_worker_children.py in the worker containers: 200 Bash calls, some
    detached, some leaving children (under tini, `init: true`); both replicas end with no zombie
    child of a worker process, and every result is intact."""
    first, *others = _containers(scaled)
    report = _load(first, "send", "/workspace", "200")
    assert report["bad"] == {} and report["detached"] == 50, report
    for container in (first, *others):
        found = _load(container, "zombies", "10", timeout=60)
        assert found["count"] == 0, (container, found)
        assert len(found["workers"]) == 1, found  # one worker (main + pool) per container


def test_the_brokers_redis_never_evicts(scaled: Project) -> None:
    """compose's Redis runs with the native stack's bound and policy (docs/operations.md)."""
    for key, wanted in (("maxmemory", str(256 * 1024 * 1024)), ("maxmemory-policy", "noeviction")):
        done = scaled.exec("redis", "redis-cli", "config", "get", key)
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == [key, wanted], done.stdout
