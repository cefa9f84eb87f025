"""Local llama-server replicas (LLAMA_REPLICAS, issue 40): how many the stack runs, on which
ports, with how many threads each, what the router and the gateway are told, and the settings
that are refused before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from openmono.stack.errors import StackError
from openmono.stack.llm_tier import (
    LLAMAS,
    ROUTER,
    _llama_command,
    _router_env,
    replicas_note,
    routed,
)
from openmono.stack.services import SERVICES, _gateway_env, _keys_env
from openmono.stack.settings import MAX_REPLICAS, StackSettings, load_settings
from openmono.stack.spec import Context


def _settings(**values: object) -> StackSettings:
    return StackSettings(_env_file=None, llama_api_key="client-key", **values)  # type: ignore[call-arg]


def _enabled(s: StackSettings) -> list[str]:
    return [spec.name for spec in SERVICES if spec.enabled(s)]


def test_one_replica_is_the_stack_as_before(tmp_path: Path) -> None:
    s = _settings()
    assert [n for n in _enabled(s) if n.startswith("llama")] == ["llama-server"]
    assert not routed(s)
    cmd = _llama_command(Context(tmp_path, s))
    assert cmd[cmd.index("--port") + 1] == "7474"
    assert "--threads" not in cmd  # llama.cpp's own choice, as before


def test_three_replicas_run_behind_the_router_on_their_own_ports(tmp_path: Path) -> None:
    s = _settings(llama_replicas=3, llama_replica_port=47600, llm_router_port=47700)
    ctx = Context(tmp_path, s)
    names = [n for n in _enabled(s) if n.startswith("llama")]
    assert names == ["llama-server", "llama-server-2", "llama-server-3"]
    assert _enabled(s).index("llm-router") > _enabled(s).index("llama-server-3")
    ports = [spec.port(s) for spec in LLAMAS[:3]]
    assert ports == [7474, 47600, 47601]
    for spec, port in zip(LLAMAS[:3], ports, strict=True):
        cmd = spec.command(ctx)
        assert cmd[cmd.index("--port") + 1] == str(port)
        assert spec.check(s) == ""
    assert routed(s) and ROUTER.enabled(s)
    workers = "127.0.0.1:7474,127.0.0.1:47600,127.0.0.1:47601"
    assert _router_env(ctx)["LLM_ROUTER_WORKERS"] == workers
    gateway = _gateway_env(ctx)
    assert gateway["LLAMA_UPSTREAM"] == workers.replace(",", " ")
    assert gateway["LLAMA_ROUTER"] == "127.0.0.1:47700"
    assert gateway["LLAMA_ROUTER_STATUS"] == "127.0.0.1:47486"
    assert "127.0.0.1:47700" in _keys_env(ctx)["KEYS_TAP_UPSTREAMS"].split()


def test_the_cores_are_split_between_replicas_unless_threads_are_set() -> None:
    assert _settings(llama_replicas=2).threads_per_replica(8) == 4
    assert _settings(llama_replicas=3).threads_per_replica(8) == 2
    assert _settings(llama_replicas=4).threads_per_replica(2) == 1  # at least one each
    assert _settings(llama_replicas=1).threads_per_replica(8) == 0  # llama.cpp's own
    assert _settings(llama_replicas=2, llama_threads=3).threads_per_replica(8) == 3  # per replica


def test_more_threads_than_cores_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("openmono.stack.llm_tier.cores", lambda: 2)
    assert replicas_note(_settings(llama_replicas=2)) == ""  # 1 thread each
    note = replicas_note(_settings(llama_replicas=2, llama_threads=2))
    assert "4 threads on 2 core(s)" in note
    assert "3 llama-server replicas x 1 thread(s)" in replicas_note(_settings(llama_replicas=3))
    unused = replicas_note(_settings(llama_replicas=2, llama_upstream="10.0.0.7:8080"))
    assert "LLAMA_REPLICAS=2 is not used" in unused


def test_replicas_with_an_upstream_list_run_none_locally() -> None:
    s = _settings(llama_replicas=3, llama_upstream="127.0.0.1:1,127.0.0.1:2")
    assert not [n for n in _enabled(s) if n.startswith("llama")]
    assert "LLAMA_UPSTREAM" in LLAMAS[1].off_reason(s)
    assert LLAMAS[2].off_reason(_settings(llama_replicas=2)) == "LLAMA_REPLICAS=2"


@pytest.mark.parametrize("value", ["0", "-1", str(MAX_REPLICAS + 1), "1000"])
def test_a_replica_count_out_of_bounds_is_a_clear_error(
    value: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENMONO_ENV_FILE", str(tmp_path / "none.env"))
    monkeypatch.setenv("LLAMA_REPLICAS", value)
    with pytest.raises(StackError) as caught:
        load_settings()
    text = str(caught.value)
    assert f"LLAMA_REPLICAS='{value}'" in text
    assert f"between 1 and {MAX_REPLICAS}" in text


def test_a_replica_port_on_another_stack_port_is_refused() -> None:
    s = _settings(llama_replicas=3, llama_replica_port=47484)  # the router's
    assert "LLAMA_REPLICA_PORT+0=47484" in LLAMAS[1].check(s)
    assert "LLM_ROUTER_PORT=47484" in ROUTER.check(s)
    past = _settings(llama_replicas=3, llama_replica_port=65535)
    assert LLAMAS[1].check(past) == ""
    assert "past 65535" in LLAMAS[2].check(past)


def test_the_routers_ports_are_checked_against_every_stack_port() -> None:
    # the scrape service's and Redis's ports too (the router's own check once left them out)
    on_scrape = _settings(llama_replicas=2, llm_router_metrics_port=5000)
    assert "LLM_ROUTER_METRICS_PORT=5000" in ROUTER.check(on_scrape)
    on_redis = _settings(llama_replicas=2, llm_router_status_port=6379)
    assert "LLM_ROUTER_STATUS_PORT=6379" in ROUTER.check(on_redis)
    assert ROUTER.check(_settings(llama_replicas=2)) == ""
