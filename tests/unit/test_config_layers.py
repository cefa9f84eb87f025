"""Settings layers: user → project (trusted) → --config → env → flags; booleans; get/set."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from openmono.config import (
    ConfigError,
    get_value,
    load_settings,
    record_project_trust,
    set_value,
    settings_file,
)


@pytest.fixture
def env(clean_env: Path) -> Path:
    """A clean environment: the data dir (user file) under tmp, no OPENMONO_* or key vars."""
    return clean_env


def write(path: Path, data: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_precedence_user_project_config_env_flags(
    env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "proj"
    sub = project / "deep" / "er"
    sub.mkdir(parents=True)
    user = {
        "llm": {"endpoint": "http://user", "model": "user-model"},
        "max_iterations": 3,
        "web": {"gateway": "http://gw-user"},
    }
    write(env / "settings.json", user)
    write(
        project / ".openmono" / "settings.json",
        {"llm.endpoint": "http://project", "max_iterations": 4},
    )
    extra = write(tmp_path / "extra.json", {"max_iterations": 5, "llm": {"model": "config-model"}})
    s = load_settings(project)  # untrusted: what does not route or widen applies
    assert (s.llm.endpoint, s.llm.model, s.max_iterations) == ("http://user", "user-model", 4)
    assert len(s.notes) == 1 and "Left out llm.endpoint from" in s.notes[0]
    s = load_settings(sub)  # the workspace's own .openmono only, never a parent's
    assert (s.llm.endpoint, s.max_iterations, s.notes) == ("http://user", 3, [])
    record_project_trust(project, True, [])
    sub = project  # the rest: a trusted project's file, in full
    s = load_settings(sub)
    assert (s.llm.endpoint, s.llm.model, s.max_iterations) == ("http://project", "user-model", 4)
    assert s.notes == []
    assert s.web.gateway == "http://gw-user"
    s = load_settings(sub, extra)
    assert (s.max_iterations, s.llm.model) == (5, "config-model")
    monkeypatch.setenv("OPENMONO_MAX_ITERATIONS", "6")
    monkeypatch.setenv("OPENMONO_LLM_MODEL", "env-model")
    s = load_settings(sub, extra)
    assert (s.max_iterations, s.llm.model, s.llm.endpoint) == (6, "env-model", "http://project")
    s = load_settings(
        sub, extra, {"max_iterations": 7, "llm.endpoint": "http://flag", "llm.model": None}
    )
    assert (s.max_iterations, s.llm.endpoint, s.llm.model) == (7, "http://flag", "env-model")


@pytest.mark.parametrize(
    "raw,expected",
    [("1", True), ("true", True), ("yes", True), ("on", True), ("ON", True),
     ("0", False), ("false", False), ("no", False), ("off", False)],
)  # fmt: skip
def test_boolean_strings_in_env(
    env: Path, monkeypatch: pytest.MonkeyPatch, raw: str, expected: bool
) -> None:
    monkeypatch.setenv("OPENMONO_WEB_SEARCH", raw)
    assert load_settings(env).web.search is expected


def test_boolean_json_and_strings_in_files(env: Path) -> None:
    write(
        env / "settings.json",
        {"web": {"search": True, "scrape": "off"}, "permissions": {"yolo": "yes"}},
    )
    s = load_settings(env)
    assert s.web.search is True and s.web.scrape is False and s.permissions.yolo is True


def test_api_key_from_llama_env_below_openmono_env(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LLAMA_API_KEY", "from-llama")
    key = load_settings(env).llm.api_key
    assert key is not None and key.get_secret_value() == "from-llama"
    monkeypatch.setenv("OPENMONO_LLM_API_KEY", "from-openmono")
    key = load_settings(env).llm.api_key
    assert key is not None and key.get_secret_value() == "from-openmono"
    assert "from-openmono" not in repr(load_settings(env))


def test_data_dir_broker_and_permissions(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENMONO_BROKER_URL", "redis://127.0.0.1:6390/0")
    write(
        env / "settings.json",
        {"permissions": {"tools": {"Bash": {"allow": "pytest*", "deny": ["sudo*"]}}}},
    )
    s = load_settings(env)
    assert s.data_dir == env and s.broker_url == "redis://127.0.0.1:6390/0"
    assert s.permissions.tools["Bash"].allow == ["pytest*"]
    assert s.permissions.tools["Bash"].deny == ["sudo*"]


def test_invalid_files_and_values_are_config_errors(env: Path, tmp_path: Path) -> None:
    (env).mkdir(parents=True, exist_ok=True)
    (env / "settings.json").write_text("{not json")
    with pytest.raises(ConfigError, match=r"settings\.json"):
        load_settings(env)
    write(env / "settings.json", {"max_iterations": "many"})
    with pytest.raises(ConfigError, match="max_iterations"):
        load_settings(env)
    write(env / "settings.json", {})
    with pytest.raises(ConfigError, match="no such file"):
        load_settings(env, tmp_path / "missing.json")


def test_set_writes_atomically_validates_and_get_reads_back(env: Path, tmp_path: Path) -> None:
    user = settings_file("user")
    assert user == env / "settings.json"
    assert set_value(user, "llm.endpoint", "http://127.0.0.1:9") == "http://127.0.0.1:9"
    assert set_value(user, "web.search", "true") is True
    assert set_value(user, "max_iterations", "12") == 12
    assert set_value(user, "llm.api_key", "sekrit") == "sekrit"
    with pytest.raises(ConfigError):
        set_value(user, "max_iterations", "-1")
    with pytest.raises(ConfigError):
        set_value(user, "no.such.key", "1")
    data = json.loads(user.read_text())
    assert data["llm"] == {"endpoint": "http://127.0.0.1:9", "api_key": "sekrit"}
    assert data["max_iterations"] == 12
    assert stat.S_IMODE(user.stat().st_mode) == 0o600
    assert [p.name for p in user.parent.iterdir() if p.name.startswith(".settings-")] == []
    s = load_settings(tmp_path)
    assert get_value(s, "llm.endpoint") == "http://127.0.0.1:9"
    assert get_value(s, "llm.api_key") == "********"
    assert get_value(s, "llm.api_key", reveal=True) == "sekrit"
    assert get_value(s, "web") == {
        "gateway": None,
        "search": True,
        "scrape": None,
        "public_fallback": False,
    }
    with pytest.raises(ConfigError):
        get_value(s, "llm.nope")
    project = settings_file("project", tmp_path / "p")
    set_value(project, "max_iterations", "2")
    assert load_settings(tmp_path / "p").max_iterations == 2
