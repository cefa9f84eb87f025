"""The table of routed services (`openmono_contracts.routed`, issue 37 item 4) is the one place a
routed service is declared: the files users read are its generation, the `/services` contract
and the stack's settings name what it names, and one more entry makes a route, a probe, a
switch and its variables (docs/architecture.md §3, "Adding a service")."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from openmono.stack.gatewayfiles import REGIONS, generate
from openmono.stack.settings import StackSettings
from openmono_contracts import ServicesInfo
from openmono_contracts.routed import ROUTED_SERVICES, services_keys

from tests.support.gateway import EXTRA_SERVICE as EXTRA
from tests.support.gateway import caddy_binary
from tests.support.procs import ROOT


def test_the_checked_in_files_are_their_generation() -> None:
    for rel in REGIONS:
        text = (ROOT / rel).read_text()
        assert generate(rel, text) == text, f"{rel} differs from the table: run `make generate`"


def test_services_info_declares_the_keys_of_the_table() -> None:
    assert tuple(ServicesInfo.model_fields) == services_keys()
    assert services_keys() == ("llm", "llm_replicas", "search", "scrape", "crawl_durable")


def test_the_stack_settings_read_every_variable_of_the_table() -> None:
    fields = StackSettings.model_fields
    for service in ROUTED_SERVICES:
        assert service.upstream_env.lower() in fields, service.key
        if service.native_port_setting:
            assert service.native_port_setting in fields, service.key
        if service.switch_env:
            # read as a switch (facts.parse_switch), and offered as it says
            on = StackSettings(_env_file=None, **{service.switch_env.lower(): "yes"})
            off = StackSettings(_env_file=None, **{service.switch_env.lower(): "off"})
            assert on.offered(service) and not off.offered(service), service.key


def _adapt(caddyfile: str, tmp_path: Path) -> str:
    """The config Caddy makes of `caddyfile` (its env left unset: every default applies)."""
    path = tmp_path / "Caddyfile"
    path.write_text(caddyfile)
    done = subprocess.run(
        [str(caddy_binary()), "adapt", "--config", str(path), "--adapter", "caddyfile"],
        env={"PATH": "/usr/bin:/bin", "LLAMA_API_KEY": "k"},
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    return done.stdout


def test_one_more_entry_is_a_route_a_probe_a_switch_and_its_variables(tmp_path: Path) -> None:
    table = (*ROUTED_SERVICES, EXTRA)
    caddyfile = generate("caddy/Caddyfile", (ROOT / "caddy" / "Caddyfile").read_text(), table)
    assert '"extra":{{if eq "{openmono_extra}" "true"}}' in caddyfile
    assert "map {env.WEB_EXTRA_ENABLED} {openmono_extra} {" in caddyfile
    adapted = _adapt(caddyfile, tmp_path)
    # the probe, the route's paths, and its default upstream (the compose service)
    assert '"/_openmono/probe/extra"' in adapted and '["/extra","/extra/*"]' in adapted
    assert json.loads(adapted) and '"dial":"extra:9000"' in adapted
    compose = generate(
        "compose/docker-compose.yml", (ROOT / "compose/docker-compose.yml").read_text(), table
    )
    for line in (
        "EXTRA_UPSTREAM: extra:9000",
        "EXTRA_DISCOVERY: dns",
        'EXTRA_ACTIVE_CHECKS: "off"',
    ):
        assert f"      {line}\n" in compose
    assert "      WEB_EXTRA_ENABLED: ${WEB_EXTRA_ENABLED:-true}\n" in compose
    env = generate("compose/.env.example", (ROOT / "compose/.env.example").read_text(), table)
    assert "\n# external extra services (host:port list)\nEXTRA_UPSTREAM=\n" in env
    assert "\nWEB_EXTRA_ENABLED=\n" in env
