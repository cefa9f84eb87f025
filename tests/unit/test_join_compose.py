"""The parts of `setup join` / `--rotate-key` that decide without a gateway: when a compose rotation
gives llama-server its own key, and whose CA `--via native` hands out."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from openmono.setup import join as joining
from openmono.setup._errors import SetupError
from openmono.stack.envfile import read_env, set_env

from tests.support.procs import ROOT


def _ca(tmp: Path, name: str) -> str:
    crt = tmp / f"{name}.crt"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-keyout", str(tmp / f"{name}.key"), "-out", str(crt), "-days", "2",
         "-subj", f"/CN={name}"],
        capture_output=True, timeout=30, check=True,
    )  # fmt: skip
    return crt.read_text()


@pytest.mark.parametrize(
    ("env", "via", "generated"),
    [
        ({}, "compose", True),
        ({"LLAMA_UPSTREAM_KEY": "own"}, "compose", False),  # later rotations: caddy only
        ({"LLAMA_UPSTREAM": "elsewhere:8080"}, "compose", False),  # not compose's llama-server
        ({}, "native", False),  # the native runner generates its own (stack/tls.py)
    ],
)
def test_a_compose_rotation_gives_llama_server_its_own_key_once(
    tmp_path: Path, env: dict[str, str], via: str, generated: bool
) -> None:
    path = tmp_path / ".env"
    set_env(path, {"LLAMA_API_KEY": "old", **env})
    assert joining._own_upstream_key(path, via) is generated
    after = read_env(path)
    if generated:
        assert after["LLAMA_UPSTREAM_KEY"] not in ("", "old")
        assert joining._own_upstream_key(path, via) is False
    else:
        assert after.get("LLAMA_UPSTREAM_KEY", "") == env.get("LLAMA_UPSTREAM_KEY", "")


def test_via_native_hands_out_the_native_ca_and_says_how_to_make_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENMONO_DATA_DIR", str(tmp_path / "data"))
    env = tmp_path / ".env"
    set_env(env, {"LLAMA_API_KEY": "k"})
    with pytest.raises(SetupError, match="--ca-file"):
        joining.find_ca(ROOT, env, None, "native")
    folder = tmp_path / "data" / "stack" / "xdg-data" / "caddy" / "pki" / "authorities" / "local"
    folder.mkdir(parents=True)
    pem = _ca(tmp_path, "native")
    (folder / "root.crt").write_text(pem)
    assert joining.find_ca(ROOT, env, None, "native") == pem.strip() + "\n"
    other = _ca(tmp_path, "mine")
    (tmp_path / "mine.pem").write_text(other)
    assert joining.find_ca(ROOT, env, tmp_path / "mine.pem", "native") == other.strip() + "\n"
