"""One configuration truth (issue 27 item 2): every command resolves a setting the same way,
flags > environment > the env file > settings files > defaults, and `config show` says which."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from openmono.cli import main
from openmono.config import current_environ, load_settings
from openmono.stack.settings import StackSettings
from openmono.stack.settings import load_settings as stack_settings


@pytest.fixture
def env_file(clean_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A test's own env file, named by OPENMONO_ENV_FILE; no GATEWAY_PORT from the shell."""
    for name in ("GATEWAY_PORT", "LLAMA_API_KEY", "WEB_SCRAPE_ENABLED", "WEB_SEARCH_ENABLED"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "compose.env"
    monkeypatch.setenv("OPENMONO_ENV_FILE", str(path))
    return path


def test_the_default_endpoint_follows_gateway_port(
    env_file: Path, monkeypatch: pytest.MonkeyPatch, clean_env: Path
) -> None:
    assert load_settings().llm.endpoint == "http://127.0.0.1:47480"
    env_file.write_text("GATEWAY_PORT=48001\n")
    assert load_settings().llm.endpoint == "http://127.0.0.1:48001"
    assert stack_settings().gateway_port == 48001
    monkeypatch.setenv("GATEWAY_PORT", "48002")  # the environment beats the env file
    assert load_settings().llm.endpoint == "http://127.0.0.1:48002"
    assert stack_settings().gateway_port == 48002
    # an endpoint someone wrote down beats the default the port implies
    clean_env.mkdir()
    (clean_env / "settings.json").write_text(json.dumps({"llm": {"endpoint": "http://user"}}))
    assert load_settings().llm.endpoint == "http://user"
    assert load_settings(overrides={"llm.endpoint": "http://flag"}).llm.endpoint == "http://flag"


def test_environment_over_env_file_over_settings_files(
    env_file: Path, monkeypatch: pytest.MonkeyPatch, clean_env: Path
) -> None:
    clean_env.mkdir()
    (clean_env / "settings.json").write_text(
        json.dumps({"llm": {"model": "user-model", "api_key": "user-key"}, "max_iterations": 3})
    )
    env_file.write_text(
        "# the stack's file\nOPENMONO_LLM_MODEL=file-model\nLLAMA_API_KEY=file-key\n"
        "OPENMONO_MAX_ITERATIONS=\nOPENMONO_BROKER_URL=redis://127.0.0.1:1/0\n"
    )
    s = load_settings()
    assert s.llm.model == "file-model"  # env file > user file
    assert s.llm.api_key is not None and s.llm.api_key.get_secret_value() == "file-key"
    assert s.max_iterations == 3  # empty in the env file = not set there
    assert s.broker_url == "redis://127.0.0.1:1/0"
    monkeypatch.setenv("OPENMONO_LLM_MODEL", "env-model")
    monkeypatch.setenv("OPENMONO_BROKER_URL", "")  # empty in the environment is a value
    s = load_settings()
    assert (s.llm.model, s.broker_url) == ("env-model", "")
    # the stack reads the same file the same way
    assert stack_settings().openmono_broker_url == ""


def test_the_env_file_is_the_checkouts_compose_env_unless_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("OPENMONO_ENV_FILE")
    monkeypatch.delenv("OPENMONO_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)  # outside the checkout: the installed package names it
    env = current_environ()
    root = Path(__file__).resolve().parents[2]
    assert env.checkout == root
    assert env.file_path == root / "compose" / ".env"
    monkeypatch.setenv("OPENMONO_ROOT", str(tmp_path))
    env = current_environ()
    assert env.checkout is None and "OPENMONO_ROOT" in env.checkout_problem
    assert env.file_path is None


def test_the_compose_network_endpoint_means_this_box_natively(env_file: Path) -> None:
    env_file.write_text("OPENMONO_LLM_ENDPOINT=http://caddy:8080\nGATEWAY_PORT=48003\n")
    assert load_settings().llm.endpoint == "http://127.0.0.1:48003"


def test_stack_switches_and_bad_values_say_where_they_came_from(
    env_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_file.write_text("WEB_SEARCH_ENABLED=\nWEB_SCRAPE_ENABLED=yes\nSEARXNG_UPSTREAM=h:1\n")
    s = StackSettings()
    assert s.search_enabled is True  # not switched, and a SearXNG is named
    assert s.scrape_enabled is True
    monkeypatch.setenv("WEB_SCRAPE_ENABLED", "off")
    assert StackSettings().scrape_enabled is False
    monkeypatch.setenv("WEB_SCRAPE_ENABLED", "maybe")
    monkeypatch.setenv("LLAMA_API_KEY", "")
    env_file.write_text("GATEWAY_PORT=http\n")
    from openmono.stack.errors import StackError

    with pytest.raises(StackError) as info:
        stack_settings()
    text = str(info.value)
    assert "GATEWAY_PORT='http' (env file): not a valid integer" in text
    assert "WEB_SCRAPE_ENABLED='maybe' (environment): not an on/off switch" in text


def test_config_show_names_every_origin_and_masks_secrets(
    env_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_file.write_text(
        "GATEWAY_PORT=48004\nLLAMA_API_KEY=sekrit-key-value\nOPENMONO_ACP_TOKEN=sekrit-token\n"
    )
    monkeypatch.setenv("OPENMONO_LLM_MODEL", "env-model")
    res = CliRunner().invoke(main, ["--max-iterations", "9", "config", "show", "--json"])
    assert res.exit_code == 0, res.output
    assert "sekrit" not in res.output
    shown = json.loads(res.output)
    agent = {row["key"]: row for row in shown["agent"]}
    stack = {row["key"]: row for row in shown["stack"]}
    assert agent["llm.endpoint"] == {
        "key": "llm.endpoint",
        "value": "http://127.0.0.1:48004",
        "origin": "default from GATEWAY_PORT (env file)",
    }
    assert agent["llm.api_key"]["value"] == "********"
    assert agent["llm.api_key"]["origin"] == "env file LLAMA_API_KEY"
    assert agent["llm.model"]["origin"] == "environment OPENMONO_LLM_MODEL"
    assert agent["max_iterations"]["origin"] == "flag"
    assert agent["acp.token"]["origin"] == "env file OPENMONO_ACP_TOKEN"
    assert agent["subagents.max_turns"]["origin"] == "default"
    assert stack["GATEWAY_PORT"]["origin"] == "env file GATEWAY_PORT"
    assert stack["LLAMA_API_KEY"]["value"] == "********"
    assert shown["files"]["env file"] == f"{env_file} (present)"
    text = CliRunner().invoke(main, ["config", "show"]).output
    assert "llm.endpoint" in text and "default from GATEWAY_PORT (env file)" in text
    assert "sekrit" not in text
