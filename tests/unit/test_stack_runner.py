"""The stack runner's wait loop: a slow start stays visible, a dead process ends the wait."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from openmono.stack.health import HttpProbe
from openmono.stack.process import read_pidfile, spawn, stop_group
from openmono.stack.runner import _wait_healthy
from openmono.stack.settings import StackSettings
from openmono.stack.spec import Context, ServiceSpec

from tests.support.procs import free_port


def _ctx(tmp_path: Path) -> Context:
    return Context(tmp_path, StackSettings(openmono_data_dir=tmp_path / "data"))


def _spec(port: int, timeout_s: float) -> ServiceSpec:
    return ServiceSpec(
        name="slow",
        enabled=lambda s: True,
        command=lambda ctx: [],
        port=lambda s: port,
        probe=lambda ctx: HttpProbe(f"http://127.0.0.1:{port}/health"),
        start_timeout_s=timeout_s,
    )


def test_a_slow_start_prints_progress_then_gives_up(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    record = spawn(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        ctx.log("slow"),
        dict(os.environ),
        tmp_path,
        ctx.pidfile("slow"),
    )
    lines: list[str] = []
    try:
        health = _wait_healthy(ctx, _spec(free_port(), 1.0), lines.append, every_s=0.2)
    finally:
        stop_group(record, grace_s=1.0)
    assert not health.ok
    assert lines and all(line.startswith("still waiting after") for line in lines)
    assert "ConnectError" in lines[-1]


def test_a_process_that_exits_ends_the_wait(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    record = spawn(
        [sys.executable, "-c", "raise SystemExit(3)"],
        ctx.log("slow"),
        dict(os.environ),
        tmp_path,
        ctx.pidfile("slow"),
    )
    health = _wait_healthy(ctx, _spec(free_port(), 30.0), lambda _line: None)
    assert health.detail == "the process exited"
    assert read_pidfile(ctx.pidfile("slow")) == record
    stop_group(record, grace_s=1.0)


def test_settings_that_cannot_work_stop_up_before_anything_starts(tmp_path: Path) -> None:
    from openmono.stack.errors import StackError
    from openmono.stack.runner import up

    settings = StackSettings(
        openmono_data_dir=tmp_path / "data",
        llama_api_key="k" * 32,
        llama_upstream_key="u" * 32,
        llama_upstream="127.0.0.1:9",
        gateway_tls_mode="files",
        gateway_tls_domain="box.example",
        openmono_broker_url="amqp://127.0.0.1:5672",
    )
    said: list[str] = []
    with pytest.raises(StackError) as caught:
        up(Context(tmp_path, settings), said.append)
    text = str(caught.value)
    assert "gateway: GATEWAY_TLS_MODE=files needs GATEWAY_TLS_CERT" in text
    assert "redis: OPENMONO_BROKER_URL='amqp://127.0.0.1:5672' is not a redis:// URL" in text
    assert not (tmp_path / "data" / "stack" / "pids").exists()


def test_two_services_on_one_port_stop_up_and_both_settings_are_named(tmp_path: Path) -> None:
    """CI once gave KEYS_PORT and GATEWAY_TLS_PORT one number: keys started, and the gateway then
    blamed "another program" for the port keys held."""
    from openmono.stack.errors import StackError
    from openmono.stack.runner import up

    settings = StackSettings(
        openmono_data_dir=tmp_path / "data",
        llama_api_key="k" * 32,
        llama_upstream_key="u" * 32,
        llama_upstream="127.0.0.1:9",
        keys_port=52331,
        gateway_tls_port=52331,
    )
    with pytest.raises(StackError) as caught:
        up(Context(tmp_path, settings), lambda _line: None)
    text = str(caught.value)
    assert "port 52331 (GATEWAY_TLS_PORT and KEYS_PORT) is bound twice (keys, gateway)" in text
    assert "another program" not in text
    assert not (tmp_path / "data" / "stack" / "pids").exists()
