"""`openmono setup gateway|search|scraper` on a temporary `.env`, settings file and frpc config."""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from openmono.cli import main
from openmono.setup import docker_answers, frpc
from openmono.stack.envfile import read_env

from tests.support.procs import ROOT, compose_v2


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout root with temp .env, data dir and frpc config (nothing of the real one)."""
    for name in (
        "GATEWAY_PORT",
        "GATEWAY_TLS_PORT",
        "LLAMA_API_KEY",
        "SEARXNG_UPSTREAM",
        "OPENMONO_WEB_SEARCH",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENMONO_ROOT", str(ROOT))
    monkeypatch.setenv("OPENMONO_ENV_FILE", str(tmp_path / "compose.env"))
    monkeypatch.setenv("OPENMONO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("OPENMONO_FRPC_CONFIG", str(tmp_path / "frpc.toml"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["setup", *args], catch_exceptions=False)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def settings(box: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((box / "data" / "settings.json").read_text())
    return data


def test_dry_run_on_a_missing_env_changes_nothing(box: Path) -> None:
    res = run("search", "--dry-run")
    assert res.exit_code == 0, res.output
    assert "dry run" in res.output
    assert "would generate LLAMA_API_KEY (missing)" in res.output
    assert "would generate SEARXNG_SECRET (missing)" in res.output
    assert "would set WEB_SEARCH_ENABLED=true (was unset)" in res.output
    assert "would set web.gateway = 'http://127.0.0.1:47480'" in res.output
    assert "would set llm.api_key = ********" in res.output
    # no gateway of this box runs: compose where an engine answers, else native, and it says so
    if docker_answers():
        assert "would start with compose (no gateway runs and a Docker engine answers):" in (
            res.output
        )
    else:
        assert "would start the native stack (no gateway runs and no Docker engine answers)" in (
            res.output
        )
        assert "SEARXNG_UPSTREAM" in res.output  # the native stack cannot run SearXNG itself
    assert sorted(p.name for p in box.iterdir()) == []


def test_dry_run_never_prints_or_touches_secrets(box: Path) -> None:
    env = box / "compose.env"
    env.write_text("# mine\nLLAMA_API_KEY=sekrit-value\nWEB_SEARCH_ENABLED=false\n")
    before = env.read_bytes()
    res = run("search", "--dry-run", "--no-start")
    assert res.exit_code == 0
    assert "sekrit-value" not in res.output
    assert "generate LLAMA_API_KEY" not in res.output
    assert "would set WEB_SEARCH_ENABLED=true (was false)" in res.output
    assert "would start nothing (--no-start)" in res.output
    assert env.read_bytes() == before
    assert not (box / "data").exists()


def test_real_run_generates_secrets_and_is_idempotent(box: Path) -> None:
    res = run("search", "--no-start")
    assert res.exit_code == 0, res.output
    env_file = box / "compose.env"
    env = read_env(env_file)
    assert len(env["LLAMA_API_KEY"]) >= 40
    assert len(env["SEARXNG_SECRET"]) >= 40
    assert env["LLAMA_API_KEY"] != env["SEARXNG_SECRET"]
    assert env["WEB_SEARCH_ENABLED"] == "true"
    assert mode(env_file) == 0o600
    assert env["LLAMA_API_KEY"] not in res.output
    cfg = settings(box)
    assert cfg["web"] == {"gateway": "http://127.0.0.1:47480"}
    assert cfg["llm"] == {"api_key": env["LLAMA_API_KEY"]}
    assert mode(box / "data" / "settings.json") == 0o600

    env_bytes = env_file.read_bytes()
    cfg_bytes = (box / "data" / "settings.json").read_bytes()
    again = run("search", "--no-start")
    assert again.exit_code == 0
    assert "generate LLAMA_API_KEY" not in again.output
    assert again.output.count("up to date") == 2
    assert env_file.read_bytes() == env_bytes
    assert (box / "data" / "settings.json").read_bytes() == cfg_bytes


def test_existing_keys_and_comments_are_kept(box: Path) -> None:
    env_file = box / "compose.env"
    env_file.write_text(
        "# my box\nLLAMA_API_KEY=kept-key\nGATEWAY_PORT=51234\nWEB_SCRAPE_ENABLED=false\n"
    )
    assert run("scraper", "--no-start").exit_code == 0
    text = env_file.read_text()
    assert text.startswith("# my box\nLLAMA_API_KEY=kept-key\n")
    env = read_env(env_file)
    assert env["WEB_SCRAPE_ENABLED"] == "true"
    assert len(env["SEARXNG_SECRET"]) >= 40  # compose interpolates it for every profile
    assert env["WEB_SEARCH_ENABLED"] == ""  # the example's "on where deployed", untouched
    cfg = settings(box)
    assert cfg["web"] == {"gateway": "http://127.0.0.1:51234"}
    assert cfg["llm"] == {"api_key": "kept-key"}


def test_gateway_touches_no_web_switch_and_writes_a_complete_compose_env(box: Path) -> None:
    assert run("gateway", "--no-start").exit_code == 0
    env_file = box / "compose.env"
    env = read_env(env_file)
    example = read_env(ROOT / "compose" / ".env.example")
    assert set(env) == set(example)  # every key compose interpolates, not only the secrets
    assert env["WEB_SEARCH_ENABLED"] == env["WEB_SCRAPE_ENABLED"] == ""
    for key in ("LLAMA_API_KEY", "SEARXNG_SECRET", "OPENMONO_ACP_TOKEN"):
        assert len(env[key]) >= 40 and not env[key].startswith("change-me"), key
    assert mode(env_file) == 0o600
    # the example's comments come along: the file explains itself
    assert env_file.read_text().startswith("# OpenMono configuration")


def test_placeholder_secrets_are_replaced(box: Path) -> None:
    env_file = box / "compose.env"
    env_file.write_text("LLAMA_API_KEY=change-me-to-a-long-random-string\nSEARXNG_SECRET=kept\n")
    res = run("gateway", "--no-start")
    assert res.exit_code == 0
    assert "generate LLAMA_API_KEY (placeholder)" in res.output
    env = read_env(env_file)
    assert not env["LLAMA_API_KEY"].startswith("change-me")
    assert env["SEARXNG_SECRET"] == "kept"


def test_a_stale_explicit_off_is_handed_back_to_services(box: Path) -> None:
    data = box / "data"
    data.mkdir()
    (data / "settings.json").write_text(json.dumps({"web": {"search": False}, "max_iterations": 7}))
    res = run("search", "--no-start")
    assert res.exit_code == 0
    assert "set web.search = null" in res.output
    cfg = settings(box)
    assert cfg["web"] == {"search": None, "gateway": "http://127.0.0.1:47480"}
    assert cfg["max_iterations"] == 7

    from openmono.config import load_settings

    loaded = load_settings(cwd=box)
    assert loaded.web.search is None
    assert loaded.web.gateway == "http://127.0.0.1:47480"


def test_a_host_frpc_config_follows_the_gateway_tls_port(box: Path) -> None:
    doc = frpc.load(ROOT / "frpc" / "frpc.example.toml")
    frpc.write(box / "frpc.toml", frpc.retarget(doc, "127.0.0.1", 47443)[0])  # frpc on the host
    (box / "compose.env").write_text("GATEWAY_PORT=51999\nGATEWAY_TLS_PORT=51443\n")
    res = run("gateway", "--no-start")
    assert res.exit_code == 0, res.output
    assert "point proxy 'openmono-gateway' at the gateway's HTTPS port, 127.0.0.1:51443" in (
        res.output
    )
    doc = tomllib.loads((box / "frpc.toml").read_text())
    proxy = frpc.gateway_proxy(doc)
    assert (proxy["localIP"], proxy["localPort"]) == ("127.0.0.1", 51443)
    assert proxy["remotePort"] == 47480  # the relay side is not ours to change
    assert frpc.check(doc) == []
    again = run("gateway", "--no-start")
    assert "already points at the gateway, 127.0.0.1:51443" in again.output

    # which side frpc runs on is `tunnel config`'s choice: compose is named, nothing rewritten
    before = (box / "frpc.toml").read_bytes()
    back = run("gateway", "--no-start", "--via", "compose")
    assert back.exit_code == 0
    assert "compose's frpc needs `openmono tunnel config --compose" in back.output
    assert (box / "frpc.toml").read_bytes() == before


def test_a_compose_frpc_config_is_never_pointed_at_the_host(box: Path) -> None:
    shutil.copy(ROOT / "frpc" / "frpc.example.toml", box / "frpc.toml")
    before = (box / "frpc.toml").read_bytes()
    res = run("scraper", "--no-start", "--via", "native")
    assert res.exit_code == 0, res.output
    assert "frpc in compose, at the gateway caddy:8443: unchanged" in res.output
    assert "run frpc on the host with `openmono tunnel config --host" in res.output
    assert (box / "frpc.toml").read_bytes() == before


def test_compose_plan_names_the_profile(box: Path) -> None:
    res = run("search", "--dry-run", "--via", "compose")
    assert res.exit_code == 0, res.output
    line = next(x for x in res.output.splitlines() if "with compose" in x)
    assert "--profile search up -d" in line
    assert f"--env-file {box / 'compose.env'}" in line
    assert "SEARXNG_UPSTREAM" not in res.output  # compose runs its own SearXNG


def test_bad_gateway_port_is_an_error(box: Path) -> None:
    (box / "compose.env").write_text("GATEWAY_PORT=http\n")
    res = run("gateway", "--no-start")
    assert res.exit_code == 1
    assert "GATEWAY_PORT='http' (env file): not a valid integer" in res.output


def test_broken_frpc_config_is_an_error_not_overwritten(box: Path) -> None:
    (box / "frpc.toml").write_text("serverAddr = [unclosed\n")
    res = run("gateway", "--no-start")
    assert res.exit_code == 1
    assert "not a readable frpc TOML file" in res.output
    assert (box / "frpc.toml").read_text() == "serverAddr = [unclosed\n"
    assert not (box / "compose.env").exists()


def test_the_written_env_satisfies_compose_for_every_profile(box: Path) -> None:
    """What `setup gateway` writes is enough for compose to interpolate the whole file."""
    compose = compose_v2()
    if compose is None:
        pytest.skip("docker-compose (validates offline) is not installed")
    assert run("gateway", "--no-start").exit_code == 0
    done = subprocess.run(
        [compose, "--env-file", str(box / "compose.env"), "-f",
         str(ROOT / "compose" / "docker-compose.yml"), "--profile", "server", "config", "-q"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_native_plan_warns_without_a_searxng(box: Path) -> None:
    res = run("search", "--dry-run", "--via", "native")
    assert res.exit_code == 0
    assert "would start the native stack" in res.output
    assert "set SEARXNG_UPSTREAM" in res.output
    (box / "compose.env").write_text("SEARXNG_UPSTREAM=127.0.0.1:8888\n")
    assert "SEARXNG_UPSTREAM" not in run("search", "--dry-run", "--via", "native").output


def test_setup_never_touches_a_tracked_file(box: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the finding: `setup scraper` rewrote the tracked frpc/frpc.toml (the checkout was dirty and
    # compose's tunnel profile broke); the generated config is ignored by git, and only an
    # existing one is ever kept on the gateway's port
    monkeypatch.delenv("OPENMONO_FRPC_CONFIG")
    generated = ROOT / "frpc" / "frpc.toml"
    if generated.exists():
        pytest.skip(f"{generated} is this checkout's own frpc config: not a test's to touch")
    ignored = subprocess.run(
        ["git", "-C", str(ROOT), "check-ignore", "-q", "frpc/frpc.toml"], timeout=30, check=False
    )
    assert ignored.returncode == 0  # the generated config is ignored, like compose/.env

    def status() -> str:
        return subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain"],
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout  # fmt: skip

    before = status()
    for target in ("gateway", "search", "scraper"):
        res = run(target, "--no-start")
        assert res.exit_code == 0, res.output
        assert status() == before, f"setup {target} changed the checkout"
    assert not generated.exists()
