"""`openmono status` (and `make status`): each process beside what the gateway says of it.

One row per service that is enabled or still running, and one per external upstream (the
`<PREFIX>_UPSTREAM` replicas of each routed service, openmono_contracts.routed). When the gateway
runs, each row also carries the gateway's own view, its `/services` answer for that service, and
says so when the two disagree: a healthy scrape service the gateway reports as `false` is a
gateway that was not reloaded, a `true` with no process behind it a stale one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import httpx
from openmono_contracts.gateway import ServicesUnreadable, read_services_sync
from openmono_contracts.routed import LLM, ROUTED_SERVICES, RoutedService
from openmono_contracts.services import ServicesInfo

from openmono.stack.health import Health, HttpProbe
from openmono.stack.keeper import KeeperState, read_state, state_path
from openmono.stack.llm_tier import LLAMAS, ROUTER, router_address
from openmono.stack.llm_tier import routed as router_on
from openmono.stack.runner import running_pid
from openmono.stack.services import GATEWAY, SERVICES
from openmono.stack.spec import HOST, Context, routed_upstreams
from openmono.stack.upstreams import parse_upstreams, strip_scheme


def _external(service: RoutedService) -> str:
    """The row name of a routed service's external upstream."""
    return f"{service.prefix.lower()} (external)"


# which `/services` key speaks for which row: the stack's own instance and the external ones
_VIEW = {
    **{s.native_service: s.key for s in ROUTED_SERVICES if s.native_service},
    **{_external(s): s.key for s in ROUTED_SERVICES},
    **{spec.name: "llm" for spec in LLAMAS},
    "llm-router": "llm",
}


@dataclass(frozen=True)
class Row:
    """One line of `openmono status`."""

    service: str
    pid: int | None
    address: str
    healthy: bool
    detail: str
    # the gateway's `/services` value for this service ("" = the gateway does not run, or has
    # nothing to say about this row), and whether it matches the process
    gateway: str = ""
    agrees: bool = True
    # how often its keeper started it again since `up`, and how its last run ended
    restarts: int = 0
    last_exit: str = ""


def status(ctx: Context) -> list[Row]:
    """Every row, with the gateway's view beside each process."""
    rows: list[Row] = []
    for spec in SERVICES:
        pid = running_pid(ctx, spec)
        if not spec.enabled(ctx.settings) and pid is None:
            continue
        # the keeper's state: the service's own pid, its restarts; after it gave up, why
        kept = read_state(state_path(ctx.pidfile(spec.name)))
        health = spec.probe(ctx).check() if pid is not None else Health(False, "not running")
        shown = kept.pid if kept is not None and kept.pid and pid is not None else pid
        rows.append(_kept_row(spec.name, shown, spec.address(ctx.settings), health, kept))
    s = ctx.settings
    for routed in ROUTED_SERVICES:
        # one row per replica: the gateway balances over those that answer
        for upstream in parse_upstreams(s.upstream_value(routed), routed.upstream_env):
            rows.append(_external_row(_external(routed), upstream, routed.health_path))
    services = _gateway_view(ctx)
    view = services if isinstance(services, str) else flags(services)
    seen = _router_view(ctx)
    # several replicas: `llm` is true while one answers, so it speaks for no single llama row;
    # the router's view of each does, and /services' llm_replicas (named llama-<n> by place)
    alone = seen is None
    names = {u: f"llama-{i}" for i, u in enumerate(routed_upstreams(s, LLM), 1)}
    return [
        _named_by_gateway(_seen_by_router(_beside(row, view, alone), seen), services, names)
        for row in rows
    ]


def flags(services: ServicesInfo) -> dict[str, bool]:
    """The boolean keys of `/services`."""
    return {k: v for k, v in services.model_dump().items() if isinstance(v, bool)}


def _named_by_gateway(row: Row, services: ServicesInfo | str, names: dict[str, str]) -> Row:
    """A llama replica's row says what `/services` says of it (`llm_replicas`), by its name."""
    if isinstance(services, str) or services.llm_replicas is None or row.service == ROUTER.name:
        return row
    if row.service == GATEWAY.name:
        healthy = sum(r.healthy for r in services.llm_replicas)
        total = len(services.llm_replicas)
        return replace(row, detail=f"{row.detail} llm_replicas={healthy}/{total} healthy")
    name = names.get(row.address)
    if _VIEW.get(row.service) != "llm" or name is None:
        return row
    said = {r.name: r.healthy for r in services.llm_replicas}.get(name)
    if said is None:
        return _with(
            row, f"{name}: not listed", row.agrees, f"{row.detail}; /services: {name} not listed"
        )
    word = "healthy" if said else "unhealthy"
    agrees = said == row.healthy
    detail = f"{row.detail}; /services: {name} {word}"
    if not agrees:
        detail += " (DISAGREE: the router's view is up to 2 s behind, `openmono status` again)"
    return _with(row, f"{name}={word}", agrees, detail)


def _router_view(ctx: Context) -> dict[str, bool] | str | None:
    """url -> healthy of each replica the router holds, why it cannot say, or None (no router)."""
    if not router_on(ctx.settings) or running_pid(ctx, ROUTER) is None:
        return None
    s = ctx.settings
    key = s.llama_upstream_key.get_secret_value() or s.llama_api_key.get_secret_value()
    try:
        resp = httpx.get(
            f"http://{router_address(s)}/workers",
            headers={"Authorization": f"Bearer {key}"},
            timeout=3.0,
        )
        resp.raise_for_status()
        listed = resp.json().get("workers", [])
        return {strip_scheme(str(w["url"])): bool(w["is_healthy"]) for w in listed}
    except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return f"router's /workers unreadable: {exc}"


def _seen_by_router(row: Row, seen: dict[str, bool] | str | None) -> Row:
    """A llama replica's row says how the router sees it (healthy, unhealthy, not held yet)."""
    if seen is None or _VIEW.get(row.service) != "llm" or row.service == ROUTER.name:
        return row
    if isinstance(seen, str):
        return replace(row, detail=f"{row.detail}; {seen}")
    held = seen.get(row.address)
    said = "not held (yet)" if held is None else ("healthy" if held else "UNHEALTHY")
    return replace(row, detail=f"{row.detail}; router: {said}")


def _kept_row(
    name: str, pid: int | None, address: str, health: Health, kept: KeeperState | None
) -> Row:
    if kept is None:
        return Row(name, pid, address, health.ok, health.detail)
    detail = health.detail
    last = ""
    if kept.last_exit is not None:
        when = time.strftime("%H:%M:%S", time.localtime(kept.last_exit_at or 0))
        last = f"{kept.describe_exit()} at {when}"
    if kept.given_up:
        detail = f"GAVE UP: {kept.given_up}; `openmono up` starts it again"
    elif kept.restarts or kept.last_exit is not None:
        detail = f"{detail}; restarted {kept.restarts}x, last exit: {last}"
    return Row(name, pid, address, health.ok, detail, restarts=kept.restarts, last_exit=last)


def running_anything(rows: list[Row]) -> bool:
    """Whether any process of this stack runs (external upstreams are not ours)."""
    return any(row.pid is not None for row in rows)


def _gateway_view(ctx: Context) -> ServicesInfo | str:
    """The gateway's `/services`, or why there is none ("": the gateway does not run)."""
    if running_pid(ctx, GATEWAY) is None:
        return ""
    gateway = f"http://{HOST}:{ctx.settings.gateway_port}"
    key = ctx.settings.llama_api_key.get_secret_value() or None
    try:
        return read_services_sync(gateway, key, timeout_s=3.0)
    except ServicesUnreadable as exc:
        return f"/services unreadable: {exc.reason}"


def _beside(row: Row, view: dict[str, bool] | str, llm_alone: bool = True) -> Row:
    if row.service == GATEWAY.name:
        if isinstance(view, dict):
            listed = " ".join(f"{k}={str(v).lower()}" for k, v in view.items())
            return _with(row, "/services read", True, f"{row.detail}; /services: {listed}")
        return _with(row, view, not view, f"{row.detail}; {view}" if view else row.detail)
    key = _VIEW.get(row.service)
    if key is None or not isinstance(view, dict) or key not in view:
        return row
    if key == "llm" and not llm_alone:
        return row
    said = view[key]
    agrees = said == row.healthy
    detail = row.detail
    if not agrees:
        process = "answers" if row.healthy else "does not answer"
        detail = (
            f"{detail}; DISAGREE: the process {process} but the gateway's /services says "
            f"{key}={str(said).lower()}"
            + (" (restart it: `openmono up` applies the settings)" if row.healthy else "")
        )
    return _with(row, f"{key}={str(said).lower()}", agrees, detail)


def _with(row: Row, gateway: str, agrees: bool, detail: str) -> Row:
    return replace(row, gateway=gateway, agrees=agrees, detail=detail)


def _external_row(name: str, upstream: str, path: str) -> Row:
    base = upstream if "://" in upstream else f"http://{upstream}"
    health = HttpProbe(base.rstrip("/") + path).check()
    return Row(name, None, strip_scheme(upstream), health.ok, health.detail)
