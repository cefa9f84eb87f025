"""The parts of the files users read that come from the table of routed services
(`openmono_contracts.routed`): `caddy/Caddyfile`, `compose/docker-compose.yml` and
`compose/.env.example`.

Each generated part sits between two marker lines (`# >>> generated: NAME ...` and
`# <<< generated: NAME`); everything else in those files is written by hand. `make generate`
(`python -m openmono.stack.gatewayfiles --write`) rewrites the parts; `--check` (and a unit test)
fails when a checked-in file differs from its generation, so the table and the files cannot drift.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

from openmono_contracts.routed import ROUTED_SERVICES, RoutedService

from openmono.stack.errors import StackError

_BEGIN = "# >>> generated: {name} (openmono_contracts.routed; `make generate`)"
_END = "# <<< generated: {name}"
# the switch's regular expression: the same words facts.parse_switch reads as on
_ON = r"~(?i)^\s*(true|1|yes|on)\s*$ true"


Table = tuple[RoutedService, ...]


def _switched(services: Table) -> list[RoutedService]:
    return [s for s in services if s.switch_env is not None]


# --- caddy/Caddyfile ---


def caddy_switches(services: Table = ROUTED_SERVICES) -> list[str]:
    """One map per switch: a literal `true`/`false` in `{openmono_<key>}`, never the env text."""
    lines: list[str] = []
    for service in _switched(services):
        lines += [
            f"map {{env.{service.switch_env}}} {{openmono_{service.key}}} {{",
            f"\t{_ON}",
            "\tdefault false",
            "}",
        ]
    return lines


def _probe_path(key: str) -> str:
    return f"/_openmono/probe/{key}"


def _services_value(service: RoutedService) -> str:
    """The template of one service's `/services` value (and its replicas' and capabilities')."""
    include = f'httpInclude "{_probe_path(service.key)}"'
    on = f'if eq "{{openmono_{service.key}}}" "true"'
    replicas = ""
    if service.replicas_key:
        replicas = (
            f',"{service.replicas_key}":{{{{httpInclude "{_probe_path(service.replicas_key)}"}}}}'
        )
    if not service.capabilities:
        if service.switch_env is None:
            return f'"{service.key}":{{{{{include}}}}}{replicas}'
        return (
            f'"{service.key}":{{{{{on}}}}}{{{{{include}}}}}{{{{else}}}}false{{{{end}}}}{replicas}'
        )
    # the answer is kept in a template variable: the capabilities are asked only when it is true
    var = f"${service.key}"
    if service.switch_env is None:
        value = f"{{{{ {var} := {include} }}}}{{{{ {var} }}}}"
    else:
        value = (
            f'{{{{ {var} := "false" }}}}{{{{{on}}}}}{{{{ {var} = {include} }}}}{{{{end}}}}'
            f"{{{{ {var} }}}}"
        )
    parts = [f'"{service.key}":{value}{replicas}']
    for cap in service.capabilities:
        parts.append(
            f'"{cap.key}":{{{{if eq {var} "true"}}}}{{{{httpInclude "{_probe_path(cap.key)}"}}}}'
            "{{else}}false{{end}}"
        )
    return ",".join(parts)


def _probe(path: str, health_path: str, service: RoutedService) -> list[str]:
    return [
        f"handle {path} {{",
        f"\timport probe {health_path} {service.compose_host} {service.compose_port} "
        f"{{${service.discovery_env}:static}} "
        f"{{${service.upstream_env}:{service.compose_upstream}}}",
        "}",
    ]


def caddy_services(services: Table = ROUTED_SERVICES) -> list[str]:
    """`/services` (a template of probe sub-requests) and one probe route per key."""
    template = ",".join(_services_value(s) for s in services)
    lines = [
        "# Each value is `true`/`false` from a sub-request to a probe below (templates'"
        " httpInclude);",
        "# a switched-off service is `false` without being asked, and a service's capabilities",
        "# (`crawl_durable`: crawl jobs survive a restart) are asked only of one that answered.",
        "# `llm_replicas` is the router's list of replicas (names and health) or null",
        "# (replicas_probe).",
        "# (The space after `{{` keeps Caddy from reading a dollar variable as an env one.)",
        "handle /services {",
        "\theader Content-Type application/json",
        "\theader Cache-Control no-store",
        "\ttemplates {",
        "\t\tmime application/json",
        "\t}",
        f"\trespond `{{{template}}}` 200",
        "}",
        "",
        "# Probes: 200 `true` when the upstream's health endpoint answers 2xx now, else 200",
        "# `false` (handle_errors below turns a refused or timed-out dial into `false`). Public",
        "# like /services, and they tell no more than it does.",
    ]
    for service in services:
        lines += _probe(_probe_path(service.key), service.health_path, service)
        if service.replicas_key:
            lines += [
                f"handle {_probe_path(service.replicas_key)} {{",
                f"\timport replicas_probe {{env.{service.router_status_env}}} "
                f"{{${service.router_status_env}:{service.key}-router:8094}}",
                "}",
            ]
        for cap in service.capabilities:
            lines += _probe(_probe_path(cap.key), cap.health_path, service)
    return lines


def caddy_plain_routes(services: Table = ROUTED_SERVICES) -> list[str]:
    """The routes of plain services, inside the bearer-checked block: 503 while switched off
    (after the auth check, so an agent that cached "on" falls back at once), else the proxy."""
    plain = [s for s in services if s.plain_route]
    lines: list[str] = []
    for service in plain:
        if not service.paths:
            raise StackError(f"routed service {service.key!r}: a plain route needs paths")
        if service.switch_env is None:
            continue
        lines += [
            f"@{service.key}_off {{",
            f"\tpath {' '.join(service.paths)}",
            f"\tvars {{openmono_{service.key}}} false",
            "}",
            f"handle @{service.key}_off {{",
            "\theader Content-Type application/json",
            f'\trespond `{{"error":"service_disabled","service":"{service.key}"}}` 503',
            "}",
        ]
    for service in plain:
        limit, limit_bytes = service.body_limit
        upstream = f"{{${service.upstream_env}:{service.compose_upstream}}}"
        lines += [
            f"@{service.key}_route path {' '.join(service.paths)}",
            f"handle @{service.key}_route {{",
            f"\tvars openmono_service {service.key}",
            f"\timport body_limit {limit} {limit_bytes} {service.key}",
            f"\treverse_proxy {upstream} {{",
            f"\t\timport discover_{{${service.discovery_env}:static}} {service.health_path} "
            f"{service.compose_host} {service.compose_port}",
            f"\t\timport upstream_policy {service.health_path} {{${service.active_checks_env}:on}}",
            "\t\tlb_policy least_conn",
            "\t\timport pooled off",
            "\t\t# the upstream checks no key of ours: it never sees the bearer",
            "\t\theader_up -Authorization",
            "\t}",
            "}",
        ]
    return lines


# --- compose/docker-compose.yml ---


def compose_gateway_env(services: Table = ROUTED_SERVICES) -> list[str]:
    """The caddy service's variables of each routed service."""
    lines = [
        "# dns: the gateway finds every replica of a service by its name, so `docker compose up",
        "# --scale llama-server=3` needs nothing else; static: exactly the *_UPSTREAM list",
        "# (commas), e.g. llama-server:8080 plus remote inference boxes (docs/scaling.md).",
        "# Caddy's active checks reach only the static fallback name, never the replicas dns",
        "# discovery finds (passive checks and the healthchecks below cover those), so they are",
        "# off (the LLM's follow GATEWAY_USAGE_TOKENS: the entrypoint above). A switch is on where",
        "# the service is deployed: the gateway's /services reports what really answers.",
    ]
    for service in services:
        if service.compose_overridable:
            up = f"${{{service.upstream_env}:-{service.compose_upstream}}}"
            discovery = f"${{{service.discovery_env}:-dns}}"
        else:
            up, discovery = service.compose_upstream, "dns"
        lines += [f"{service.upstream_env}: {up}", f"{service.discovery_env}: {discovery}"]
        if not service.tapped:
            lines.append(f'{service.active_checks_env}: "off"')
        if service.switch_env is not None:
            lines.append(f"{service.switch_env}: ${{{service.switch_env}:-true}}")
    return lines


# --- compose/.env.example ---


def env_example(services: Table = ROUTED_SERVICES) -> list[str]:
    """The switches and upstream lists users set in `.env`."""
    lines = [
        "# switches: empty = on where the service is deployed (compose: its profile); false = off"
    ]
    lines += [f"{s.switch_env}=" for s in _switched(services)]
    for service in services:
        lines += [f"# {line}" for line in service.env_doc.splitlines()]
        lines.append(f"{service.upstream_env}=")
        if service.compose_overridable:
            lines.append(f"{service.discovery_env}=")
    return lines


# --- splicing ---

# file (relative to the checkout) -> region name -> its lines
REGIONS: dict[str, dict[str, Callable[[Table], list[str]]]] = {
    "caddy/Caddyfile": {
        "switches": caddy_switches,
        "services": caddy_services,
        "plain routes": caddy_plain_routes,
    },
    "compose/docker-compose.yml": {"gateway environment": compose_gateway_env},
    "compose/.env.example": {"routed services": env_example},
}


def splice(text: str, name: str, lines: list[str]) -> str:
    """`text` with the region `name` holding `lines`, indented as its marker lines are."""
    begin = re.escape(_BEGIN.format(name=name))
    end = re.escape(_END.format(name=name))
    pattern = re.compile(rf"^([ \t]*){begin}\n.*?^[ \t]*{end}\n", re.DOTALL | re.MULTILINE)
    found = list(pattern.finditer(text))
    if len(found) != 1:
        raise StackError(f"{len(found)} regions `generated: {name}` (want exactly one)")
    indent = found[0].group(1)
    body = "".join(f"{indent}{line}\n" if line else "\n" for line in lines)
    block = f"{indent}{_BEGIN.format(name=name)}\n{body}{indent}{_END.format(name=name)}\n"
    return text[: found[0].start()] + block + text[found[0].end() :]


def generate(relpath: str, text: str, services: Table = ROUTED_SERVICES) -> str:
    """The file's text with each of its regions generated anew from `services`."""
    for name, render in REGIONS[relpath].items():
        text = splice(text, name, render(services))
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m openmono.stack.gatewayfiles")
    parser.add_argument("--root", type=Path, default=Path.cwd())
    parser.add_argument("--write", action="store_true", help="rewrite the generated regions")
    args = parser.parse_args(argv)
    for rel in REGIONS:
        path = args.root / rel
        text = path.read_text()
        new = generate(rel, text)
        if new == text:
            continue
        if args.write:
            path.write_text(new)
            print(f"wrote {rel}")
        else:
            print(f"{rel} differs from its generation: run `make generate`", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
