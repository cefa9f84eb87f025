"""The gateway's view beside each process, the settings a service was started with, and a
gateway that health-checks only what is switched on (its config, as Caddy adapts it)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from openmono.stack.runner import changed_settings, fingerprint
from openmono.stack.services import _gateway_env
from openmono.stack.settings import StackSettings
from openmono.stack.spec import Context
from openmono.stack.status import Row, _beside

from tests.support.gateway import caddy_binary
from tests.support.procs import ROOT


def test_a_healthy_process_the_gateway_calls_off_is_a_disagreement() -> None:
    row = Row("scrape", 42, "127.0.0.1:5000", True, "200 /health")
    seen = _beside(row, {"llm": True, "search": False, "scrape": False})
    assert seen.gateway == "scrape=false" and not seen.agrees
    assert "DISAGREE: the process answers but the gateway's /services says scrape=false" in (
        seen.detail
    )
    assert "`openmono up` applies the settings" in seen.detail
    gone = _beside(Row("scrape", None, "x", False, "not running"), {"scrape": True})
    assert not gone.agrees and "does not answer" in gone.detail
    fine = _beside(row, {"scrape": True})
    assert fine.agrees and fine.detail == "200 /health"
    gateway = _beside(Row("gateway", 7, "x", True, "200 /health"), {"llm": True, "scrape": False})
    assert gateway.gateway == "/services read" and gateway.agrees
    assert gateway.detail == "200 /health; /services: llm=true scrape=false"
    assert _beside(row, "") == row  # no gateway running: nothing to compare


def test_changed_settings_are_named_never_shown() -> None:
    was = fingerprint(["caddy", "run"], {"WEB_SCRAPE_ENABLED": "false", "LLAMA_API_KEY": "k1"})
    assert "k1" not in json.dumps(was)
    now = fingerprint(["caddy", "run"], {"WEB_SCRAPE_ENABLED": "true", "LLAMA_API_KEY": "k2"})
    assert changed_settings(was, now) == "LLAMA_API_KEY, WEB_SCRAPE_ENABLED"
    assert changed_settings(was, was) == ""
    assert changed_settings({}, now) == "started by an earlier openmono"


def _active_checks(env: dict[str, str]) -> dict[str, int]:
    done = subprocess.run(
        [str(caddy_binary()), "adapt", "--config", str(ROOT / "caddy" / "Caddyfile"),
         "--adapter", "caddyfile"],
        env=env, capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    counts: dict[str, int] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("handler") == "reverse_proxy" and "active" in node.get("health_checks", {}):
                for upstream in node.get("upstreams", []):
                    counts[upstream["dial"]] = counts.get(upstream["dial"], 0) + 1
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(done.stdout))
    return counts


@pytest.mark.parametrize(("scrape", "tokens"), [(False, True), (True, True), (True, False)])
def test_a_switched_off_upstream_is_not_health_checked(
    tmp_path: Path, scrape: bool, tokens: bool
) -> None:
    # the finding: 1,048 of 1,154 gateway log lines were health checks of switched-off upstreams
    settings = StackSettings(
        openmono_data_dir=tmp_path,
        llama_api_key="k",
        scrape_port=5999,
        llama_port=7999,
        web_scrape_enabled=scrape,
        web_search_enabled=False,
        gateway_usage_tokens=tokens,
    )
    env = {"PATH": "/usr/bin:/bin", **_gateway_env(Context(tmp_path, settings))}
    counts = _active_checks(env)
    # the llm, on both listeners; passive checks only through the token tap (caddy/Caddyfile)
    assert counts.get("127.0.0.1:7999", 0) == (0 if tokens else 2)
    assert "127.0.0.1:9" not in counts  # search is off: its placeholder is never asked
    # scrape: /scrape and /firecrawl on both listeners, only when it is on
    assert counts.get("127.0.0.1:5999", 0) == (4 if scrape else 0)
