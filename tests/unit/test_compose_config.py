"""The compose file validates offline (Debian's docker-compose needs no engine for `config`)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from tests.support.procs import ROOT

COMPOSE = ROOT / "compose" / "docker-compose.yml"
ENV_EXAMPLE = ROOT / "compose" / ".env.example"


def _config(*extra: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("docker-compose")
    if exe is None:
        pytest.skip("docker-compose is not installed (make setup installs it as root on Debian)")
    return subprocess.run(
        [exe, "--env-file", str(ENV_EXAMPLE), "-f", str(COMPOSE), "config", *extra],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_compose_config_is_valid() -> None:
    result = _config("-q")
    assert result.returncode == 0, result.stderr


def test_compose_services_profiles_and_healthchecks() -> None:
    result = _config()
    assert result.returncode == 0, result.stderr
    doc = yaml.safe_load(result.stdout)
    services = doc["services"]
    llama = services["llama-server"]
    assert llama["image"] == "ghcr.io/ggml-org/llama.cpp:server"
    assert {"--jinja", "--metrics"} <= set(llama["command"])
    assert llama["environment"]["LLAMA_API_KEY"]  # --api-key through llama.cpp's own env var
    assert {"server", "full"} <= set(llama["profiles"])
    caddy = services["caddy"]
    assert caddy["image"] == "caddy:2-alpine"
    assert caddy["ports"][0]["published"] in (47480, "47480")
    assert caddy["ports"][0]["target"] == 8080
    assert any(
        v.endswith("/etc/caddy/Caddyfile:ro") or v.get("read_only")
        for v in [_vol(x) for x in caddy["volumes"]]
    )
    assert caddy["depends_on"]["llama-server"]["condition"] == "service_healthy"
    for name in ("llama-server", "caddy", "searxng", "scrapling", "redis"):
        assert "healthcheck" in services[name], name
    assert "search" in services["searxng"]["profiles"]
    assert "scraper" in services["scrapling"]["profiles"]
    assert {"agent", "full"} <= set(services["worker"]["profiles"])


def _vol(v: object) -> object:
    if isinstance(v, dict):
        return v
    return str(v)


def test_an_empty_api_key_is_refused_by_compose(tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = tmp_path / ".env"
    env.write_text(
        ENV_EXAMPLE.read_text().replace(
            "LLAMA_API_KEY=change-me-to-a-long-random-string", "LLAMA_API_KEY="
        )
    )
    exe = shutil.which("docker-compose")
    if exe is None:
        pytest.skip("docker-compose is not installed")
    result = subprocess.run(
        [exe, "--env-file", str(env), "-f", str(COMPOSE), "config", "-q"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "LLAMA_API_KEY" in result.stderr
