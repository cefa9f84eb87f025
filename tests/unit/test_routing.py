"""Call routing without a broker: workspace ids, box ids, and what a worker refuses.

Real workers (queues, refusals over Redis): tests/integration/test_worker_routing.py.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from openmono_contracts import Route, ToolRequest
from openmono_contracts.routing import (
    WORKSPACE_ID_FILE,
    WorkspaceIdError,
    box_id,
    ensure_workspace_id,
    find_workspace_id,
    read_workspace_id,
    route_for,
)
from openmono_worker import WorkerSettings
from openmono_worker.routing import RoutingError, served_routes


def _request(ws: Path, route: Route | None) -> ToolRequest:
    return ToolRequest(
        tool="ListDirectory", call_id="c", session_id="s", workspace=str(ws), route=route
    )


def test_routing_ensure_creates_once_and_reads_back(tmp_path: Path) -> None:
    assert read_workspace_id(tmp_path) is None
    first = ensure_workspace_id(tmp_path)
    assert ensure_workspace_id(tmp_path) == first == read_workspace_id(tmp_path)
    assert (tmp_path / WORKSPACE_ID_FILE).read_text() == first + "\n"
    assert [p.name for p in (tmp_path / ".openmono").iterdir()] == ["workspace-id"]


def test_routing_racing_creators_all_get_the_same_id(tmp_path: Path) -> None:
    roots = [tmp_path] * 16
    with ProcessPoolExecutor(4) as pool:
        ids = set(pool.map(ensure_workspace_id, roots))
    assert ids == {read_workspace_id(tmp_path)}
    assert [p.name for p in (tmp_path / ".openmono").iterdir()] == ["workspace-id"]


def test_routing_malformed_or_unwritable_id_is_an_error(tmp_path: Path) -> None:
    (tmp_path / ".openmono").mkdir()
    (tmp_path / WORKSPACE_ID_FILE).write_text("not an id; rm -rf /\n")
    with pytest.raises(WorkspaceIdError, match="does not hold a workspace id"):
        read_workspace_id(tmp_path)
    with pytest.raises(WorkspaceIdError):
        route_for(tmp_path)
    missing = tmp_path / "gone"
    with pytest.raises(WorkspaceIdError, match="cannot create"):
        ensure_workspace_id(missing)


def test_routing_nearest_id_at_or_above_the_workspace(tmp_path: Path) -> None:
    outer = ensure_workspace_id(tmp_path)
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_workspace_id(deep) == (tmp_path, outer)
    inner = ensure_workspace_id(tmp_path / "a")
    assert find_workspace_id(deep) == (tmp_path / "a", inner)
    assert route_for(deep) == Route(kind="workspace", id=inner)
    assert route_for(deep).queue == f"openmono.tools.ws.{inner}"


def test_routing_without_an_id_the_route_is_this_box(tmp_path: Path) -> None:
    route = route_for(tmp_path)
    assert route == Route(kind="box", id=box_id())
    assert route.queue == f"openmono.tools.box.{box_id()}"


def test_routing_route_ids_are_queue_safe() -> None:
    with pytest.raises(ValueError, match="pattern"):
        Route(kind="workspace", id="../../etc")


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs util-linux unshare")
def test_routing_another_mount_namespace_is_another_box() -> None:
    """What a container is: the same kernel, another filesystem view, so another box id."""
    code = "from openmono_contracts.routing import box_id; print(box_id())"
    same = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert same.stdout.strip() == box_id()
    other = subprocess.run(
        ["unshare", "--mount", sys.executable, "-c", code], capture_output=True, text=True
    )
    if other.returncode != 0:
        pytest.skip(f"cannot unshare a mount namespace here: {other.stderr.strip()}")
    assert other.stdout.strip() not in ("", box_id())


def test_routing_box_mode_refuses_other_boxes_and_workspaces(tmp_path: Path) -> None:
    served = served_routes(WorkerSettings(roots=str(tmp_path)))
    mine = Route(kind="box", id=box_id())
    assert served.queues == [mine.queue]
    assert served.refusal(_request(tmp_path, mine), mine.queue) is None
    # a folder it was not given (WORKER_ROOTS; default: home) is refused on the right route too
    given = served_routes(WorkerSettings(roots=str(tmp_path / "given")))
    assert "add its folder to WORKER_ROOTS" in (
        given.refusal(_request(tmp_path, mine), mine.queue) or ""
    )
    other = Route(kind="box", id="f" * 24)
    assert "this worker serves the workspaces of its own box" in (
        served.refusal(_request(tmp_path, other), other.queue) or ""
    )
    ws = Route(kind="workspace", id="a" * 32)
    assert served.refusal(_request(tmp_path, ws), ws.queue) is not None
    assert "names no route" in (served.refusal(_request(tmp_path, None), None) or "")
    assert "was delivered on" in (served.refusal(_request(tmp_path, mine), "elsewhere") or "")


def test_routing_workspace_mode_serves_inside_its_roots_only(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "sub").mkdir(parents=True)
    b.mkdir()
    settings = WorkerSettings(workspaces=f"{a}, {b}")
    with pytest.raises(RoutingError, match="has no workspace id"):
        served_routes(settings)  # pool processes never create ids
    served = served_routes(settings, create=True)
    route_a = Route(kind="workspace", id=ensure_workspace_id(a))
    route_b = Route(kind="workspace", id=ensure_workspace_id(b))
    assert served.queues == sorted([route_a.queue, route_b.queue])
    assert served.refusal(_request(a / "sub", route_a), route_a.queue) is None
    assert served.refusal(_request(b, route_b), None) is None
    assert "is not inside" in (served.refusal(_request(b, route_a), route_a.queue) or "")
    stranger = Route(kind="workspace", id="c" * 32)
    assert "this worker serves the workspaces" in (
        served.refusal(_request(a, stranger), stranger.queue) or ""
    )
    (a / WORKSPACE_ID_FILE).write_text("d" * 32 + "\n")
    assert "now holds workspace id" in (served.refusal(_request(a, route_a), route_a.queue) or "")


@pytest.mark.parametrize(
    ("value", "message"),
    [("relative/path", "not an absolute path"), ("/definitely/not/here", "not an existing")],
)
def test_routing_bad_roots_are_refused_at_startup(value: str, message: str) -> None:
    with pytest.raises(RoutingError, match=message):
        served_routes(WorkerSettings(workspaces=value), create=True)
