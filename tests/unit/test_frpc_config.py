"""`openmono tunnel config` and the frpc TOML: parsed back, required keys, port = the gateway's.

No frp binary can be had here, so the TOML is validated by parsing it (see frpc/README.md).
"""

from __future__ import annotations

import stat
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from openmono.cli import main
from openmono.setup import frpc
from openmono.setup._toml import dumps
from openmono.stack.envfile import read_env

from tests.support.procs import ROOT

ARGS = [
    "--server-addr",
    "relay.example.net",
    "--token",
    "t0ken/with+chars",
    "--remote-port",
    "6001",
]


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("GATEWAY_PORT", raising=False)
    monkeypatch.delenv("GATEWAY_TLS_PORT", raising=False)
    monkeypatch.setenv("OPENMONO_ROOT", str(ROOT))
    monkeypatch.setenv("OPENMONO_ENV_FILE", str(tmp_path / "compose.env"))
    monkeypatch.setenv("OPENMONO_FRPC_CONFIG", str(tmp_path / "frpc.toml"))
    (tmp_path / "compose.env").write_text("GATEWAY_PORT=52111\nGATEWAY_TLS_PORT=52443\n")
    return tmp_path


def tunnel(*args: str) -> Result:
    return CliRunner().invoke(main, ["tunnel", "config", *args], catch_exceptions=False)


def load(path: Path) -> dict[str, object]:
    return tomllib.loads(path.read_text())


def test_host_config_forwards_exactly_the_gateway_port(box: Path) -> None:
    res = tunnel(*ARGS, "--host")
    assert res.exit_code == 0, res.output
    doc = load(box / "frpc.toml")
    assert frpc.check(doc) == []
    assert doc["serverAddr"] == "relay.example.net"
    assert doc["serverPort"] == 7000
    assert doc["transport"] == {"tls": {"enable": True}}
    assert doc["auth"] == {"method": "token", "token": "{{ .Envs.FRP_AUTH_TOKEN }}"}
    assert doc["proxies"] == [
        {
            "name": "openmono-gateway",
            "type": "tcp",
            "localIP": "127.0.0.1",
            "localPort": 52443,  # the HTTPS listener: the relay only carries TLS
            "remotePort": 6001,
        }
    ]
    assert "t0ken" not in (box / "frpc.toml").read_text()
    assert read_env(box / "compose.env")["FRP_AUTH_TOKEN"] == "t0ken/with+chars"
    assert stat.S_IMODE((box / "compose.env").stat().st_mode) == 0o600


def test_compose_config_targets_the_caddy_service(box: Path) -> None:
    assert tunnel(*ARGS, "--server-port", "7443").exit_code == 0
    doc = load(box / "frpc.toml")
    proxy = frpc.gateway_proxy(doc)
    assert (proxy["localIP"], proxy["localPort"]) == ("caddy", 8443)
    assert doc["serverPort"] == 7443


def test_inline_token_is_private(box: Path) -> None:
    assert tunnel(*ARGS, "--inline-token").exit_code == 0
    doc = load(box / "frpc.toml")
    assert doc["auth"] == {"method": "token", "token": "t0ken/with+chars"}
    assert stat.S_IMODE((box / "frpc.toml").stat().st_mode) == 0o600
    assert "FRP_AUTH_TOKEN" not in read_env(box / "compose.env")


def test_idempotent(box: Path) -> None:
    assert "wrote" in tunnel(*ARGS).output
    before = (box / "frpc.toml").read_bytes()
    again = tunnel(*ARGS)
    assert again.output.startswith("unchanged")
    assert (box / "frpc.toml").read_bytes() == before


def test_dry_run_prints_and_writes_nothing(box: Path) -> None:
    res = tunnel(*ARGS, "--dry-run", "--output", str(box / "other.toml"))
    assert res.exit_code == 0
    assert tomllib.loads(res.output)["proxies"][0]["remotePort"] == 6001
    assert not (box / "other.toml").exists()
    assert not (box / "frpc.toml").exists()


@pytest.mark.parametrize("bad", [["--remote-port", "0"], ["--server-port", "70000"]])
def test_bad_ports_are_refused(box: Path, bad: list[str]) -> None:
    res = tunnel(*ARGS, *bad)
    assert res.exit_code == 1
    assert "must be a port number" in res.output
    assert not (box / "frpc.toml").exists()


def test_the_shipped_template_is_valid() -> None:
    doc = load(ROOT / "frpc" / "frpc.example.toml")
    assert frpc.check(doc) == []
    proxy = frpc.gateway_proxy(doc)
    assert (proxy["localIP"], proxy["localPort"]) == frpc.COMPOSE_TARGET


def test_check_catches_unsafe_configs() -> None:
    spec = frpc.TunnelSpec("relay", 7000, 6001, "127.0.0.1", 47480)
    doc = frpc.build(spec)
    doc["transport"] = {"tls": {"enable": False}}
    doc["proxies"].append({"name": "ssh", "type": "tcp", "localPort": 22, "remotePort": 6022})
    del doc["auth"]
    problems = frpc.check(doc)
    assert "transport.tls.enable is not true" in problems
    assert "missing auth.token" in problems
    assert "exactly one proxy (the gateway) must be configured" in problems


def test_toml_writer_round_trips_awkward_strings() -> None:
    data = {
        "a": 'quote " and \\ backslash',
        "b": "ünïcode ✓",
        "n": 3,
        "f": 1.5,
        "t": True,
        "l": ["x", 2],
        "nested": {"deep": {"x": "y"}},
        "rows": [{"name": "one", "v": 1}, {"name": "two", "v": 2}],
    }
    assert tomllib.loads(dumps(data)) == data


def test_token_from_the_environment(box: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FRP_AUTH_TOKEN", "from-env-token")
    args = ["--server-addr", "relay.example.net", "--remote-port", "6001"]
    res = tunnel(*args)
    assert res.exit_code == 0, res.output
    assert read_env(box / "compose.env")["FRP_AUTH_TOKEN"] == "from-env-token"
