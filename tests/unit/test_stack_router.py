"""The native stack's router (issue 40 item 1): when it runs, what it is told, what the gateway and
the token tap are told of it, and that the key stays off its command line."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from openmono.stack.llm_tier import ROUTER, _router_env, routed
from openmono.stack.router import RouterError, RouterSettings, launch_command, nodelay
from openmono.stack.services import _gateway_env, _keys_env
from openmono.stack.settings import StackSettings
from openmono.stack.spec import Context
from pydantic import SecretStr

from tests.support.procs import free_port, wait_until


def _ctx(tmp: Path, **values: object) -> Context:
    return Context(tmp, StackSettings(_env_file=None, llama_api_key="client-key", **values))  # type: ignore[call-arg]


def test_one_replica_runs_no_router_and_the_gateway_goes_direct(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    assert not routed(ctx.settings) and not ROUTER.enabled(ctx.settings)
    assert _gateway_env(ctx)["LLAMA_ROUTER"] == ""
    assert _keys_env(ctx)["KEYS_TAP_UPSTREAMS"] == "127.0.0.1:7474"


def test_several_replicas_go_through_the_router_with_each_ones_key(tmp_path: Path) -> None:
    ctx = _ctx(
        tmp_path,
        llama_upstream="127.0.0.1:7474,10.0.0.7:8080",
        llama_upstream_keys="10.0.0.7:8080=box-key",
        llama_upstream_key="internal-key",
        llm_router_port=47600,
        llama_parallel=2,
    )
    assert ROUTER.enabled(ctx.settings)
    env = _router_env(ctx)
    assert env["LLM_ROUTER_WORKERS"] == "127.0.0.1:7474,10.0.0.7:8080"
    assert env["LLM_ROUTER_WORKER_KEYS"] == "10.0.0.7:8080=box-key"
    # what the gateway sends upstream, which the router checks and passes on
    assert env["LLM_ROUTER_API_KEY"] == "internal-key"
    assert env["LLM_ROUTER_MAX_CONCURRENT"] == "16"  # 4 per slot: 2 replicas x 2 slots
    gateway = _gateway_env(ctx)
    assert gateway["LLAMA_ROUTER"] == "127.0.0.1:47600"
    assert gateway["LLAMA_ROUTER_METRICS"] == "127.0.0.1:47485"
    assert "127.0.0.1:47600" in _keys_env(ctx)["KEYS_TAP_UPSTREAMS"].split()


def test_without_an_internal_key_the_router_checks_the_clients(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, llama_upstream="127.0.0.1:1,127.0.0.1:2")
    assert _router_env(ctx)["LLM_ROUTER_API_KEY"] == "client-key"


def test_a_port_clash_stops_up_before_anything_starts(tmp_path: Path) -> None:
    s = _ctx(tmp_path, llm_router_port=47485).settings
    assert "LLM_ROUTER_PORT" in ROUTER.check(s)


def _router(**values: object) -> RouterSettings:
    return RouterSettings(port=1, metrics_port=2, api_key=SecretStr("the-key"), **values)  # type: ignore[arg-type]


def test_the_key_is_not_on_the_routers_command_line() -> None:
    cmd = launch_command(_router(policy="manual"))
    assert "the-key" not in " ".join(cmd)
    assert "--api-key" not in cmd
    assert cmd[cmd.index("--assignment-mode") + 1] == "min_load"
    assert cmd[cmd.index("--prometheus-host") + 1] == "127.0.0.1"


def test_worker_lists_and_keys_are_urls() -> None:
    s = _router(workers="127.0.0.1:1, http://box:2/", worker_keys=SecretStr("box:2=k"))
    assert s.worker_urls() == ["http://127.0.0.1:1", "http://box:2"]
    assert s.keys() == {"http://box:2": "k"}


@pytest.mark.parametrize("value", ["llama-server", "llama-server:http", ":8080"])
def test_a_bad_discovery_name_is_refused(value: str) -> None:
    with pytest.raises(RouterError, match="LLM_ROUTER_DISCOVER"):
        _router(discover=value).discover_target()


def test_a_key_without_its_value_is_refused() -> None:
    with pytest.raises(RouterError, match="LLM_ROUTER_WORKER_KEYS"):
        _router(worker_keys=SecretStr("box:2")).keys()


def test_the_replicas_status_names_by_place_and_never_says_an_address() -> None:
    from openmono.stack.router import ReplicaView, replicas_body
    from openmono_contracts.services import ReplicaHealth

    health = {"http://10.0.0.7:8080": False, "http://127.0.0.1:7474": True}
    body = replicas_body(health)
    listed = [ReplicaHealth.model_validate(r) for r in json.loads(body)]
    assert [(r.name, r.healthy) for r in listed] == [("llama-1", False), ("llama-2", True)]
    assert b"10.0.0.7" not in body and b"7474" not in body
    view = ReplicaView(max_age_s=60)
    assert view.current() is None  # nothing synced yet: not an empty list
    view.update(health)
    assert view.current() == body
    assert ReplicaView(max_age_s=0).current() is None


def test_the_services_template_includes_the_replicas_probe() -> None:
    from openmono.stack.gatewayfiles import caddy_services

    lines = "\n".join(caddy_services())
    assert '"llm":{{httpInclude "/_openmono/probe/llm"}},"llm_replicas":' in lines
    assert '{{httpInclude "/_openmono/probe/llm_replicas"}}' in lines
    assert "import replicas_probe {env.LLAMA_ROUTER_STATUS} {$LLAMA_ROUTER_STATUS:" in lines


def test_the_routers_listener_gets_tcp_nodelay_for_what_it_accepts(tmp_path: Path) -> None:
    """The router accepts with Nagle on; its parent sets TCP_NODELAY on the listener from outside,
    and the connections it accepts afterwards have it (docs/scaling.md, "The router")."""
    port = free_port()
    ready = tmp_path / "ready"
    server = (
        "import socket, sys\n"
        f"s = socket.create_server(('127.0.0.1', {port}))\n"
        f"open({str(ready)!r}, 'w').close()\n"
        "c, _ = s.accept()\n"
        "c.sendall(str(c.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)).encode())\n"
    )
    child = subprocess.Popen([sys.executable, "-c", server])
    try:
        wait_until(ready.exists, 10, "the listener")
        assert nodelay(child.pid, port) == 1
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            assert conn.recv(8) == b"1"
    finally:
        child.kill()
        child.wait(5)
