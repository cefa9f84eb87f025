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
import hashlib
import sys
import time
from collections.abc import Callable
from pathlib import Path

from openmono_contracts.facts import GATEWAY_SECRET_ENV
from openmono_contracts.privatefs import ensure_private_root, private_dir

from openmono.config import current_environ
from openmono.stack.applied import forget_applied, record_applied
from openmono.stack.envfile import is_placeholder
from openmono.stack.errors import StackError
from openmono.stack.health import Health, port_in_use
from openmono.stack.keeper import read_state, state_path
from openmono.stack.llm_tier import own_ports
from openmono.stack.process import is_ours_and_alive, read_pidfile, spawn, stop_group
from openmono.stack.services import SERVICES, SWITCH_SETUP
from openmono.stack.settings import env_file_path
from openmono.stack.spec import HOST, Context, ServiceSpec
from openmono.stack.tls import ensure_gateway_secret, ensure_redis_password, ensure_upstream_key

Say = Callable[[str], None]


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
    # the gateway's own secret: only the gateway and the key service get it (their spec.env)
    env.pop(GATEWAY_SECRET_ENV, None)
    # Caddy keeps autosave/state under XDG dirs: keep them inside this stack's data dir
    env["XDG_CONFIG_HOME"] = str(ctx.settings.stack_dir / "xdg-config")
    env["XDG_DATA_HOME"] = str(ctx.settings.stack_dir / "xdg-data")
    env.update(spec.env(ctx))
    return env


def _shared_ports(specs: list[ServiceSpec], ctx: Context) -> list[str]:
    """A port the enabled services would bind twice: said before anything starts, with the
    settings that name it. Found later, the second bind would blame "another program"."""
    users: dict[int, list[str]] = {}
    for spec in specs:
        for port in spec.bound_ports(ctx.settings):
            users.setdefault(port, []).append(spec.name)
    named = own_ports(ctx.settings)
    problems = []
    for port, names in users.items():
        if len(names) > 1:
            settings = [n for n, p in named.items() if p == port]
            which = f" ({' and '.join(settings)})" if len(settings) > 1 else ""
            owners = ", ".join(dict.fromkeys(names))
            problems.append(f"port {port}{which} is bound twice ({owners}): give each its own")
    return problems


def _tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def up(ctx: Context, say: Say) -> None:
    """Bring the stack to what the settings say, in order, waiting for each service: start what
    is enabled and not running, restart what runs with other settings than it was started with
    (a switch, an upstream, a key), stop what runs but is switched off."""
    if is_placeholder(ctx.settings.llama_api_key.get_secret_value()):
        raise StackError(
            "LLAMA_API_KEY is empty or the .env.example placeholder (change-me…): "
            "`make up` generates one into compose/.env"
        )
    if ensure_upstream_key(env_file_path(ctx.root), ctx.settings):
        say(f"generated LLAMA_UPSTREAM_KEY (llama-server's own key) into {env_file_path(ctx.root)}")
    if ensure_redis_password(env_file_path(ctx.root), ctx.settings):
        say(f"generated REDIS_PASSWORD (the broker's password) into {env_file_path(ctx.root)}")
    if ensure_gateway_secret(env_file_path(ctx.root), ctx.settings):
        say(f"generated GATEWAY_SECRET (the gateway's own secret) into {env_file_path(ctx.root)}")
    _note_switches_from_the_shell(say)
    if tightened := ensure_private_root(ctx.settings.data_dir):
        say(f"{ctx.settings.data_dir}: took group/other access off {tightened} path(s)")
    private_dir(ctx.settings.stack_dir)  # before any service's file (redis.conf) lands in it
    specs = enabled_services(ctx)
    problems = _shared_ports(specs, ctx)
    problems += [f"{spec.name}: {why}" for spec in specs if (why := spec.check(ctx.settings))]
    if problems:
        raise StackError(
            "settings that cannot work (nothing was started or stopped):\n  "
            + "\n  ".join(problems)
        )
    for note in dict.fromkeys(note for spec in SERVICES if (note := spec.note(ctx.settings))):
        say(f"note: {note}")
    _stop_switched_off(ctx, say)
    started: list[ServiceSpec] = []
    for i, spec in enumerate(specs, 1):
        label = f"[{i}/{len(specs)}] {spec.name:<13}"
        try:
            command = spec.command(ctx)
        except StackError:
            _rollback(ctx, started, say)
            raise
        config = fingerprint(command, spec.env(ctx))
        record = read_pidfile(ctx.pidfile(spec.name))
        if record is not None and is_ours_and_alive(record):
            changed = changed_settings(record.config, config)
            if not changed:
                say(f"{label} already running (pid {record.pid}) on {spec.address(ctx.settings)}")
                continue
            say(f"{label} started with other settings ({changed}): restarting (pid {record.pid})")
            _stop_one(ctx, spec)
        ports = (spec.port(ctx.settings),) if spec.owns_port else ()
        busy = [p for p in (*ports, *spec.more_ports(ctx.settings)) if port_in_use(HOST, p)]
        if busy:
            _rollback(ctx, started, say)
            raise StackError(
                f"{spec.name}: port {busy[0]} is in use by another program; "
                f"pick another port in compose/.env or the environment"
            )
        state = state_path(ctx.pidfile(spec.name))
        state.unlink(missing_ok=True)
        record = spawn(
            _kept(ctx, spec, command),
            ctx.log(spec.name),
            _child_env(ctx, spec),
            ctx.root,
            ctx.pidfile(spec.name),
            config,
            private=spec.private,
        )
        started.append(spec)
        say(f"{label} starting (pid {record.pid}) …")
        health = _wait_healthy(ctx, spec, functools.partial(_prefixed, say, label))
        if not health.ok:
            kept = read_state(state)
            _rollback(ctx, started, say)
            log = ctx.log(spec.name)
            if kept is not None and kept.last_exit_at is not None:
                # it died (a broken model): say so, not "within 180 s"
                took = kept.last_exit_at - record.started_at
                why = (
                    f"exited after {took:.1f} s with {kept.describe_exit()}, "
                    "before it became healthy"
                )
            else:
                why = (
                    f"did not become healthy within {spec.start_timeout_s:.0f} s ({health.detail})"
                )
            raise StackError(f"{spec.name} {why}. Last lines of {log}:\n{_tail(log)}")
        elapsed = time.time() - record.started_at
        say(f"{label} healthy in {elapsed:.1f} s on {spec.address(ctx.settings)}")
    record_applied(ctx.settings)


def _kept(ctx: Context, spec: ServiceSpec, command: list[str]) -> list[str]:
    """`command` under its keeper (stack/keeper.py), which starts it again when it crashes."""
    s = ctx.settings
    return [
        sys.executable,
        "-m",
        "openmono.stack.keeper",
        "--name",
        spec.name,
        "--state",
        str(state_path(ctx.pidfile(spec.name))),
        "--limit",
        str(s.stack_restart_limit),
        "--backoff",
        str(s.stack_restart_backoff_s),
        "--",
        *command,
    ]


def fingerprint(command: list[str], env: dict[str, str]) -> dict[str, str]:
    """Short hashes of what a service is started with (its command, its own variables)."""
    values = {"command": "\0".join(command), **env}
    return {name: hashlib.sha256(value.encode()).hexdigest()[:16] for name, value in values.items()}


def changed_settings(was: dict[str, str], now: dict[str, str]) -> str:
    """What differs, by name ("" = nothing); a record without any is from an earlier version."""
    if not was:
        return "started by an earlier openmono"
    names = sorted(n for n in {*was, *now} if was.get(n) != now.get(n))
    return ", ".join(names)


def _stop_switched_off(ctx: Context, say: Say) -> None:
    """Stop what runs but is no longer enabled (a switch turned off, an external upstream named)."""
    for spec in reversed(SERVICES):
        if spec.enabled(ctx.settings) or running_pid(ctx, spec) is None:
            continue
        record = read_pidfile(ctx.pidfile(spec.name))
        if _stop_one(ctx, spec) and record:
            say(f"stopped {spec.name} (pid {record.pid}): {spec.off_reason(ctx.settings)}")


def _note_switches_from_the_shell(say: Say) -> None:
    """A switch set in the shell but not in the env file lasts one start: say so, and how to keep
    it (the finding: a later restart from another shell turned scrape off, silently)."""
    env = current_environ()
    where = env.file_path or "the env file"
    for name, command in SWITCH_SETUP.items():
        if env.origin(name) != "environment":
            continue
        shell, kept = env.process[name], env.file.get(name, "")
        if shell.strip().lower() == kept.strip().lower():
            continue
        say(
            f"note: {name}={shell} comes from this shell ({where} says {kept or 'unset'}): "
            f"a start without it goes back to that; `openmono setup {command}` writes it there"
        )


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
        kept = read_state(state_path(ctx.pidfile(spec.name)))
        if kept is not None and kept.last_exit is not None:
            # it crashed before it was ever healthy: its keeper would only start it again
            return Health(False, f"the process exited ({kept.describe_exit()})")
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
    state_path(pidfile).unlink(missing_ok=True)
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
            state_path(pidfile).unlink(missing_ok=True)
            say(f"{spec.name} was not running (stale pid file removed)")
    forget_applied(ctx.settings)
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
