"""Explicit switches and the gateway URL the agent hands to the web tools."""

from __future__ import annotations

import pytest
from openmono_contracts.facts import parse_switch
from openmono_worker import WorkerSettings
from openmono_worker.web import gateway_base, resolve_web_access


@pytest.mark.parametrize("raw", ["1", "true", "TRUE", " yes ", "on", True, 1])
def test_truthy(raw: object) -> None:
    assert parse_switch(raw) is True


@pytest.mark.parametrize("raw", ["0", "false", "No", "off", False, 0])
def test_falsy(raw: object) -> None:
    assert parse_switch(raw) is False


@pytest.mark.parametrize("raw", [None, "", "  "])
def test_unset(raw: object) -> None:
    assert parse_switch(raw) is None


@pytest.mark.parametrize("raw", ["maybe", "2", 2, 0.5])
def test_garbage_is_an_error_not_a_guess(raw: object) -> None:
    with pytest.raises(ValueError, match="switch"):
        parse_switch(raw)


def test_env_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENMONO_WEB_SEARCH", "off")
    monkeypatch.setenv("OPENMONO_WEB_SCRAPE", "yes")
    settings = WorkerSettings().web
    assert settings.search is False
    assert settings.scrape is True


def test_env_switches_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENMONO_WEB_SEARCH", raising=False)
    monkeypatch.delenv("OPENMONO_WEB_SCRAPE", raising=False)
    monkeypatch.setenv("SEARCH", "true")  # must not be read as the switch
    settings = WorkerSettings().web
    assert settings.search is None
    assert settings.scrape is None


@pytest.mark.parametrize(
    ("url", "base"),
    [
        ("http://relay.example:47480", "http://relay.example:47480"),
        ("http://relay.example:47480/", "http://relay.example:47480"),
        ("https://relay.example/v1", "https://relay.example"),
        ("https://relay.example/v1/", "https://relay.example"),
        ("127.0.0.1:47480", "http://127.0.0.1:47480"),
        ("", None),
        (None, None),
    ],
)
def test_gateway_base(url: str | None, base: str | None) -> None:
    assert gateway_base(url) == base


def test_gateway_defaults_to_the_llm_endpoint() -> None:
    access = resolve_web_access(
        gateway=None, llm_endpoint="http://box:47480/v1", api_key="k", search="true"
    )
    assert access.gateway == "http://box:47480"
    assert access.api_key == "k"
    assert access.search is True
    assert access.scrape is None


def test_explicit_gateway_wins() -> None:
    access = resolve_web_access(
        gateway="http://gw:1", llm_endpoint="http://box:2", api_key=None, scrape=False
    )
    assert access.gateway == "http://gw:1"
    assert access.scrape is False
    assert access.api_key is None


def test_one_worker_settings_class_keeps_every_env_name(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tools, Celery and the web section read one class; the variable names did not change.
    monkeypatch.setenv("WORKER_WEB_SEARCH", "on")
    monkeypatch.setenv("OPENMONO_WEB_SEARCH", "off")  # the agent's name wins
    monkeypatch.setenv("WORKER_WEB_SCRAPE", "yes")
    monkeypatch.delenv("OPENMONO_WEB_SCRAPE", raising=False)
    monkeypatch.setenv("WORKER_WEB_DDG_URL", "http://127.0.0.1:9/html/")
    monkeypatch.setenv("WORKER_CONCURRENCY", "3")
    monkeypatch.setenv("OPENMONO_BROKER_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("WORKER_GREP_ENGINE", "python")
    settings = WorkerSettings()
    assert settings.web.search is False and settings.web.scrape is True
    assert settings.web.ddg_url == "http://127.0.0.1:9/html/"
    assert settings.concurrency == 3 and settings.broker_url == "redis://127.0.0.1:1/0"
    assert settings.grep_engine == "python"
