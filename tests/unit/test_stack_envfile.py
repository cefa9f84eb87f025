"""The stack's .env handling: secrets generated once, mode 0600, comments and order kept."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from openmono.stack.envfile import ensure_secret, read_env, set_env


def test_generates_missing_secret_with_private_mode(tmp_path: Path) -> None:
    env = tmp_path / "compose" / ".env"
    value, generated = ensure_secret(env, "LLAMA_API_KEY")
    assert generated
    assert len(value) >= 40
    assert read_env(env)["LLAMA_API_KEY"] == value
    assert stat.S_IMODE(env.stat().st_mode) == 0o600


def test_existing_secret_is_kept(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("# keep me\nLLAMA_API_KEY=abc\nOTHER=1\n")
    value, generated = ensure_secret(env, "LLAMA_API_KEY")
    assert (value, generated) == ("abc", False)
    assert env.read_text() == "# keep me\nLLAMA_API_KEY=abc\nOTHER=1\n"


def test_empty_secret_is_replaced(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("LLAMA_API_KEY=\nGATEWAY_PORT=1\n")
    value, generated = ensure_secret(env, "LLAMA_API_KEY")
    assert generated and value
    assert env.read_text().splitlines() == [f"LLAMA_API_KEY={value}", "GATEWAY_PORT=1"]


def test_set_env_updates_in_place_and_reports_changes(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text('# c\nA="1"\n#B=commented\nC=3\n')
    assert set_env(env, {"A": "1", "C": "4", "D": "5"}) == ["C", "D"]
    assert env.read_text() == '# c\nA="1"\n#B=commented\nC=4\nD=5\n'
    assert set_env(env, {"C": "4"}) == []
    assert read_env(env) == {"A": "1", "C": "4", "D": "5"}


def test_compose_env_is_complete_with_generated_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openmono.stack.envfile import ensure_compose_env

    from tests.support.procs import ROOT

    for key in (
        "LLAMA_API_KEY",
        "LLAMA_UPSTREAM_KEY",
        "SEARXNG_SECRET",
        "OPENMONO_ACP_TOKEN",
        "GATEWAY_SECRET",
    ):
        monkeypatch.delenv(key, raising=False)
    example = ROOT / "compose" / ".env.example"
    env = tmp_path / ".env"
    env.write_text("LLAMA_API_KEY=kept\nGATEWAY_PORT=1\n")  # what `make up` used to write
    generated = ensure_compose_env(env, example)
    assert generated == ["GATEWAY_SECRET", "OPENMONO_ACP_TOKEN", "REDIS_PASSWORD", "SEARXNG_SECRET"]
    values = read_env(env)
    assert set(values) == set(read_env(example))
    assert values["LLAMA_API_KEY"] == "kept" and values["GATEWAY_PORT"] == "1"
    assert stat.S_IMODE(env.stat().st_mode) == 0o600
    assert ensure_compose_env(env, example) == []  # idempotent


def test_native_up_refuses_the_placeholder_key(tmp_path: Path) -> None:
    from openmono.stack.errors import StackError
    from openmono.stack.runner import up
    from openmono.stack.settings import StackSettings
    from openmono.stack.spec import Context
    from pydantic import SecretStr

    settings = StackSettings(
        openmono_data_dir=tmp_path, llama_api_key=SecretStr("change-me-to-a-long-random-string")
    )
    with pytest.raises(StackError, match="placeholder"):
        up(Context(tmp_path, settings), print)
