"""Upstream lists and per-upstream keys of the native stack, as the gateway gets them."""

from __future__ import annotations

from pathlib import Path

import pytest
from openmono.stack.errors import StackError
from openmono.stack.services import _gateway_env
from openmono.stack.settings import StackSettings
from openmono.stack.spec import Context
from openmono.stack.upstreams import caddy_key_lines, parse_keys, parse_upstreams


def test_lists_take_commas_blanks_and_schemes() -> None:
    value = " 127.0.0.1:7474, http://10.0.0.7:8080/ ,box-3.lan:8080 [::1]:9"
    assert parse_upstreams(value, "LLAMA_UPSTREAM") == [
        "127.0.0.1:7474",
        "10.0.0.7:8080",
        "box-3.lan:8080",
        "[::1]:9",
    ]
    assert parse_upstreams("", "X") == []


@pytest.mark.parametrize(
    "value",
    ["127.0.0.1", "a:0", "a:70000", "http://a:1/v1", "{env.HOME}:1", "a:1,a:1", "u@a:1", "a:1;b"],
)
def test_bad_lists_are_refused_with_the_variable_named(value: str) -> None:
    with pytest.raises(StackError, match="LLAMA_UPSTREAM"):
        parse_upstreams(value, "LLAMA_UPSTREAM")


def test_keys_become_one_map_line_per_remote() -> None:
    keys = parse_keys(
        "10.0.0.7:8080=k1, http://box:9=a/b+c=", ["127.0.0.1:1", "10.0.0.7:8080", "box:9"]
    )
    assert keys == {"10.0.0.7:8080": "k1", "box:9": "a/b+c="}
    assert caddy_key_lines(keys) == "10.0.0.7:8080 k1\nbox:9 a/b+c="


@pytest.mark.parametrize(
    "value",
    [
        "10.0.0.7:8080",
        "10.0.0.7:8080=",
        "other:1=k",
        "10.0.0.7:8080=a b",
        "10.0.0.7:8080={env.X}",
        "10.0.0.7:8080=#k",
        '10.0.0.7:8080=a"b',
    ],
)
def test_bad_keys_are_refused(value: str) -> None:
    with pytest.raises(StackError, match="LLAMA_UPSTREAM"):
        parse_keys(value, ["10.0.0.7:8080"])


def test_gateway_env_renders_lists_for_caddy(tmp_path: Path) -> None:
    settings = StackSettings(
        _env_file=None,
        llama_upstream="127.0.0.1:7001,127.0.0.1:7002",
        llama_upstream_keys="127.0.0.1:7002=remote-key",
        scrape_upstream="127.0.0.1:5001, 127.0.0.1:5002",
    )
    env = _gateway_env(Context(tmp_path, settings))
    assert env["LLAMA_UPSTREAM"] == "127.0.0.1:7001 127.0.0.1:7002"
    assert env["GATEWAY_LLAMA_KEYS"] == "127.0.0.1:7002 remote-key"
    assert env["SCRAPE_UPSTREAM"] == "127.0.0.1:5001 127.0.0.1:5002"
    assert env["LLAMA_DISCOVERY"] == env["SCRAPE_DISCOVERY"] == "static"
    # nothing given: the stack's own services
    env = _gateway_env(Context(tmp_path, StackSettings(_env_file=None, llama_port=7474)))
    assert env["LLAMA_UPSTREAM"] == "127.0.0.1:7474"
    assert env["GATEWAY_LLAMA_KEYS"] == ""


def test_the_scrape_service_gets_the_first_searxng_of_a_list(tmp_path: Path) -> None:
    from openmono.stack.services import _scrape_env

    settings = StackSettings(
        _env_file=None, searxng_upstream="127.0.0.1:8081, 127.0.0.1:8082", web_search_enabled="1"
    )
    assert _scrape_env(Context(tmp_path, settings))["SCRAPE_SEARXNG_URL"] == "http://127.0.0.1:8081"
