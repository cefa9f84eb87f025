"""Compose is scalable: no fixed names or host ports on the replicated services, the gateway
discovers them by name, and its entrypoint turns the users' comma lists into the Caddyfile's form
(run here with the host's sh, as the caddy container's sh runs it)."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest
import yaml

from tests.support.procs import ROOT

COMPOSE = ROOT / "compose" / "docker-compose.yml"
CADDY_RUN = "exec caddy run --config /etc/caddy/Caddyfile --adapter caddyfile"


def _services() -> dict[str, Any]:
    services: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())["services"]
    return services


@pytest.mark.parametrize("name", ["llama-server", "searxng", "scrapling"])
def test_replicated_services_have_no_fixed_name_or_host_port(name: str) -> None:
    service = _services()[name]
    assert "container_name" not in service
    assert "ports" not in service


def test_the_gateway_discovers_replicas_by_name() -> None:
    env = _services()["caddy"]["environment"]
    assert env["LLAMA_DISCOVERY"] == "${LLAMA_DISCOVERY:-dns}"
    assert env["SEARXNG_DISCOVERY"] == env["SCRAPE_DISCOVERY"] == "dns"


def _entrypoint(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = _services()["caddy"]["entrypoint"][2].replace("$$", "$")
    assert CADDY_RUN in script
    script = script.replace(CADDY_RUN, 'printf "%s|%s" "$LLAMA_UPSTREAM" "$GATEWAY_LLAMA_KEYS"')
    return subprocess.run(
        ["sh", "-c", script],
        env={
            "PATH": "/usr/bin:/bin",
            "LLAMA_API_KEY": "a-real-key",
            "GATEWAY_SECRET": "a-real-secret",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )


def test_the_entrypoint_renders_lists_and_keys() -> None:
    done = _entrypoint(
        {
            "LLAMA_UPSTREAM": "llama-server:8080,10.0.0.7:8080,10.0.0.8:8080",
            "LLAMA_UPSTREAM_KEYS": "10.0.0.7:8080=key-b,10.0.0.8:8080=a/b+c=",
        }
    )
    assert done.returncode == 0, done.stderr
    upstreams, keys = done.stdout.split("|")
    assert upstreams == "llama-server:8080 10.0.0.7:8080 10.0.0.8:8080"
    assert keys == "10.0.0.7:8080 key-b\n10.0.0.8:8080 a/b+c="


@pytest.mark.parametrize("keys", ["h:1={env.HOME}", "h:1=a b", 'h:1=a"b', "h:1=#x"])
def test_the_entrypoint_refuses_keys_the_caddyfile_cannot_hold(keys: str) -> None:
    done = _entrypoint({"LLAMA_UPSTREAM": "h:1", "LLAMA_UPSTREAM_KEYS": keys})
    assert done.returncode == 78
    assert "LLAMA_UPSTREAM_KEYS" in done.stderr


def test_the_entrypoint_refuses_an_empty_gateway_secret() -> None:
    done = _entrypoint({"GATEWAY_SECRET": ""})
    assert done.returncode == 78 and "GATEWAY_SECRET is empty" in done.stderr
