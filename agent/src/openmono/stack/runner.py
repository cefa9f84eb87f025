"""`openmono up | down | status`: run the enabled services in order, wait for health, stop exactly
ours.

Each service gets a progress line while it starts (`[2/3] llama-server  starting … healthy in 2.6
s`);
a service that does not become healthy in time stops the run, shows the tail of its log, and stops
what
this run started, so a failed `up` leaves nothing half-running.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from openmono.config import current_environ
from openmono.stack.envfile import is_placeholder
from openmono.stack.errors import StackError
from openmono.stack.health import Health, HttpProbe, port_in_use
from openmono.stack.process import exit_code, is_ours_and_alive, read_pidfile, spawn, stop_group
from openmono.stack.services import HOST, SERVICES, Context, ServiceSpec
from openmono.stack.settings import env_file_path
from openmono.stack.tls import ensure_upstream_key
from openmono.stack.upstreams import parse_upstreams, strip_scheme

Say = Callable[[str], None]


@dataclass(frozen=True)
class Row:
    """One line of `openmono status`."""

    service: str
    pid: int | None
    address: str
    healthy: bool
    detail: str


def running_pid(ctx: Context, spec: ServiceSpec) -> int | None:
    """The pid of this stack's `spec` process while it runs (its pid file names a live process of
    ours), else None."""
    record = read_pidfile(ctx.pidfile(spec.name))
    return record.pid if record and is_ours_and_alive(record) else None


def is_running(ctx: Context, spec: ServiceSpec) -> bool:
    """Whether this stack's `spec` process is alive (its pid file names a live process of ours)."""
    return running_pid(ctx, spec) is not None


def enabled_services(ctx: Context) -> list[ServiceSpec]:
    return [spec for spec in SERVICES if spec.enabled(ctx.settings)]


def _child_env(ctx: Context, spec: ServiceSpec) -> dict[str, str]:
    env = current_environ().child_environment()
    env.update(ctx.settings.as_env())
    # Caddy keeps autosave/state under XDG dirs: keep them inside this stack's data dir
    env["XDG_CONFIG_HOME"] = str(ctx.settings.stack_dir / "xdg-config")
    env["XDG_DATA_HOME"] = str(ctx.settings.stack_dir / "xdg-data")
    env.update(spec.env(ctx))
    return env


def _tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def up(ctx: Context, say: Say) -> None:
    """Start every enabled service that is not already running, in order, waiting for each."""
    if is_placeholder(ctx.settings.llama_api_key.get_secret_value()):
        raise StackError(
            "LLAMA_API_KEY is empty or the .env.example placeholder (change-me…): "
            "`make up` generates one into compose/.env"
        )
    if ensure_upstream_key(env_file_path(ctx.root), ctx.settings):
        say(f"generated LLAMA_UPSTREAM_KEY (llama-server's own key) into {env_file_path(ctx.root)}")
    specs = enabled_services(ctx)
    started: list[ServiceSpec] = []
    for i, spec in enumerate(specs, 1):
        label = f"[{i}/{len(specs)}] {spec.name:<13}"
        pid = running_pid(ctx, spec)
        if pid is not None:
            say(f"{label} already running (pid {pid}) on {spec.address(ctx.settings)}")
            continue
        ports = (spec.port(ctx.settings),) if spec.owns_port else ()
        busy = [p for p in (*ports, *spec.more_ports(ctx.settings)) if port_in_use(HOST, p)]
        if busy:
            _rollback(ctx, started, say)
            raise StackError(
                f"{spec.name}: port {busy[0]} is in use by another program; "
                f"pick another port in compose/.env or the environment"
            )
        try:
            command = spec.command(ctx)
        except StackError:
            _rollback(ctx, started, say)
            raise
        record = spawn(
            command, ctx.log(spec.name), _child_env(ctx, spec), ctx.root, ctx.pidfile(spec.name)
        )
        started.append(spec)
        say(f"{label} starting (pid {record.pid}) …")
        health = _wait_healthy(ctx, spec, functools.partial(_prefixed, say, label))
        if not health.ok:
            code = exit_code(record)
            _rollback(ctx, started, say)
            log = ctx.log(spec.name)
            if code is not None:  # it died (a broken model): say so, not "within 180 s"
                took = time.time() - record.started_at
                why = f"exited after {took:.1f} s with exit code {code}, before it became healthy"
            else:
                why = (
                    f"did not become healthy within {spec.start_timeout_s:.0f} s ({health.detail})"
                )
            raise StackError(f"{spec.name} {why}. Last lines of {log}:\n{_tail(log)}")
        elapsed = time.time() - record.started_at
        say(f"{label} healthy in {elapsed:.1f} s on {spec.address(ctx.settings)}")


def _prefixed(say: Say, label: str, line: str) -> None:
    say(f"{label} {line}")


def _wait_healthy(ctx: Context, spec: ServiceSpec, say: Say, every_s: float = 10.0) -> Health:
    """Poll the probe until healthy, the process exits or time runs out; a line every `every_s`."""
    probe = spec.probe(ctx)
    started = time.monotonic()
    deadline = started + spec.start_timeout_s
    next_note = started + every_s
    health = Health(False, "not probed yet")
    delay = 0.05
    while time.monotonic() < deadline:
        record = read_pidfile(ctx.pidfile(spec.name))
        if record is None or not is_ours_and_alive(record):
            return Health(False, "the process exited")
        health = probe.check()
        if health.ok:
            return health
        if time.monotonic() >= next_note:  # a slow start (a big model loading) stays visible
            say(f"still waiting after {time.monotonic() - started:.0f} s: {health.detail}")
            next_note += every_s
        time.sleep(delay)
        delay = min(delay * 1.5, 0.5)
    return health


def _rollback(ctx: Context, started: list[ServiceSpec], say: Say) -> None:
    for spec in reversed(started):
        if _stop_one(ctx, spec):
            say(f"      stopped {spec.name} (rollback)")


def _stop_one(ctx: Context, spec: ServiceSpec) -> bool:
    pidfile = ctx.pidfile(spec.name)
    record = read_pidfile(pidfile)
    stopped = stop_group(record) if record else False
    pidfile.unlink(missing_ok=True)
    return stopped


def down(ctx: Context, say: Say) -> int:
    """Stop every service this stack started (whatever is enabled now), in reverse order."""
    count = 0
    for spec in reversed(SERVICES):
        pidfile = ctx.pidfile(spec.name)
        if not pidfile.exists():
            continue
        record = read_pidfile(pidfile)
        if record and _stop_one(ctx, spec):
            say(f"stopped {spec.name} (pid {record.pid})")
            count += 1
        else:
            pidfile.unlink(missing_ok=True)
            say(f"{spec.name} was not running (stale pid file removed)")
    if count == 0:
        say("nothing of this stack was running")
    return count


def restart(ctx: Context, names: list[str], say: Say) -> None:
    """Stop the named services (if ours and running), then `up` again so they re-read `.env`."""
    known = {spec.name for spec in SERVICES}
    unknown = sorted(set(names) - known)
    if unknown:
        listed = ", ".join(sorted(known))
        raise StackError(f"unknown service(s) {', '.join(unknown)}; known: {listed}")
    for spec in reversed(SERVICES):
        if spec.name not in names:
            continue
        record = read_pidfile(ctx.pidfile(spec.name))
        if _stop_one(ctx, spec) and record:
            say(f"stopped the {spec.name} (pid {record.pid}) so it reads the new settings")
    up(ctx, say)


def status(ctx: Context) -> list[Row]:
    """One row per service that is enabled or still running."""
    rows: list[Row] = []
    for spec in SERVICES:
        pid = running_pid(ctx, spec)
        if not spec.enabled(ctx.settings) and pid is None:
            continue
        health = spec.probe(ctx).check() if pid is not None else Health(False, "not running")
        rows.append(Row(spec.name, pid, spec.address(ctx.settings), health.ok, health.detail))
    s = ctx.settings
    for name, value, path in (
        ("llama", s.llama_upstream, "/health"),
        ("searxng", s.searxng_upstream, "/healthz"),
        ("scrape", s.scrape_upstream, "/health"),
    ):
        # one row per replica: the gateway balances over those that answer
        for upstream in parse_upstreams(value, f"{name.upper()}_UPSTREAM"):
            rows.append(_external_row(ctx, f"{name} (external)", upstream, path))
    return rows


def _external_row(ctx: Context, name: str, upstream: str, path: str) -> Row:
    base = upstream if "://" in upstream else f"http://{upstream}"
    health = HttpProbe(base.rstrip("/") + path).check()
    return Row(name, None, strip_scheme(upstream), health.ok, health.detail)
