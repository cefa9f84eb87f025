"""`openmono setup gateway|search|scraper`: what to change, then change it.

Steps: 1. `.env`: generate the secrets when missing, switch `WEB_SEARCH_ENABLED` /
`WEB_SCRAPE_ENABLED` on (in the file, so every later start keeps it)  2. frpc: keep a generated
config's gateway proxy on the gateway's HTTPS port  3. agent settings: `web.gateway`, the key, and
no stale explicit "off" switch  4. start: the stack that runs, else compose or native (`pick`).
`plan()` computes all of it without touching anything (that is `--dry-run`); `apply()` performs
it. Running it twice changes nothing the second time. Secrets are never printed; tracked files
of the checkout are never written (the frpc config `openmono tunnel config` generates is ignored
by git).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from openmono_contracts.facts import (
    API_KEY_ENV,
    GENERATED_SECRETS,
    LOOPBACK,
    SCRAPE_SWITCH_ENV,
    SEARCH_SWITCH_ENV,
    parse_switch,
)

from openmono.config import ConfigError, read_settings_file, set_value, user_settings_file
from openmono.setup import frpc
from openmono.setup._bringup import PROFILES, BringUp, Say, pick
from openmono.setup._bringup import compose_command as _compose_command
from openmono.setup._errors import SetupError
from openmono.stack import (
    StackError,
    StackSettings,
    ensure_compose_env,
    is_placeholder,
    load_settings,
    read_env,
    set_env,
    write_private,
)

Target = Literal["gateway", "search", "scraper"]
Via = Literal["auto", "compose", "native"]
SWITCHES = {"search": SEARCH_SWITCH_ENV, "scraper": SCRAPE_SWITCH_ENV}
_MASK = "********"


@dataclass
class Plan:
    """Everything `apply` would do; `lines()` is what `--dry-run` prints."""

    target: Target
    root: Path | None
    env_file: Path
    env_set: dict[str, str] = field(default_factory=dict)
    env_notes: list[str] = field(default_factory=list)
    frpc_file: Path | None = None
    frpc_doc: dict[str, Any] | None = None
    frpc_note: str = ""
    settings_file: Path = field(default_factory=user_settings_file)
    settings_set: dict[str, Any] = field(default_factory=dict)
    bring_up: BringUp = field(default_factory=lambda: BringUp("none", "", []))
    warnings: list[str] = field(default_factory=list)

    @property
    def changes_files(self) -> bool:
        return bool(self.env_set or self.frpc_doc is not None or self.settings_set)

    def lines(self, dry_run: bool) -> list[str]:
        verb = "would " if dry_run else ""
        out = [f"openmono setup {self.target}" + (" (dry run: nothing changes)" if dry_run else "")]
        out.append(f"  .env            {self.env_file}")
        out += [f"    {verb}{note}" for note in self.env_notes] or ["    up to date"]
        if self.frpc_file is not None:
            out.append(f"  frpc            {self.frpc_file}")
            out.append(f"    {verb}{self.frpc_note}" if self.frpc_doc else f"    {self.frpc_note}")
        out.append(f"  agent settings  {self.settings_file}")
        if self.settings_set:
            for key, value in self.settings_set.items():
                shown = _MASK if key == "llm.api_key" else _show(value)
                out.append(f"    {verb}set {key} = {shown}")
        else:
            out.append("    up to date")
        out.append(f"  start           {verb}start {self.bring_up.describe()}")
        out += [f"  note: {w}" for w in self.warnings]
        return out


def _show(value: Any) -> str:
    return "null (ask the gateway's /services)" if value is None else repr(value)


def _env_plan(target: Target, current: dict[str, str], plan: Plan) -> None:
    wanted: dict[str, str] = {}
    # SEARXNG_SECRET for every target: compose interpolates the whole file, so a missing one
    # stops `--profile server` too, not only `--profile search`.
    for key in GENERATED_SECRETS:
        if is_placeholder(current.get(key, "")):
            wanted[key] = secrets.token_urlsafe(32)
            why = "placeholder" if current.get(key, "").strip() else "missing"
            plan.env_notes.append(f"generate {key} ({why})")
    switch = SWITCHES.get(target)
    if switch and _switched_on(current.get(switch, "")) is not True:
        wanted[switch] = "true"
        plan.env_notes.append(f"set {switch}=true (was {current.get(switch) or 'unset'})")
    plan.env_set = wanted


def _switched_on(raw: str) -> bool | None:
    try:
        return parse_switch(raw)
    except ValueError:
        return None  # not a switch at all: setting it to true repairs it


def _stack_settings() -> StackSettings:
    try:
        return load_settings()
    except StackError as exc:
        raise SetupError(str(exc)) from exc


def _frpc_plan(path: Path, stack: StackSettings, mode: str, plan: Plan) -> None:
    """A generated frpc config stays on the gateway's HTTPS port. frpc on the host (127.0.0.1)
    follows GATEWAY_TLS_PORT; frpc in compose (caddy:8443) has nothing to follow. Which side frpc
    runs on is `openmono tunnel config`'s choice (--compose/--host), never setup's: a stack started
    on the other side is named in a note instead."""
    plan.frpc_file = path
    doc = frpc.load(path)
    proxy = frpc.gateway_proxy(doc)
    ip, port = proxy.get("localIP"), proxy.get("localPort")
    if ip == frpc.COMPOSE_TARGET[0]:
        plan.frpc_note = f"frpc in compose, at the gateway {ip}:{port}: unchanged"
        if mode == "native":
            plan.warnings.append(
                f"{path} tunnels to the compose gateway ({ip}:{port}), but the native stack is "
                "started: run frpc on the host with `openmono tunnel config --host ...`"
            )
        return
    target = (LOOPBACK, stack.gateway_tls_port)
    if ip != LOOPBACK:
        plan.frpc_note = f"tunnels to {ip}:{port} (another host): unchanged"
        return
    updated, changed = frpc.retarget(doc, *target)
    where = f"{target[0]}:{target[1]}"
    if changed:
        plan.frpc_doc = updated
        plan.frpc_note = f"point proxy {frpc.PROXY_NAME!r} at the gateway's HTTPS port, {where}"
    else:
        plan.frpc_note = f"already points at the gateway, {where}"
    if mode == "compose":
        plan.warnings.append(
            f"{path} tunnels from the host ({where}); compose's frpc needs "
            "`openmono tunnel config --compose ...`"
        )


def _lookup(data: dict[str, Any], dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return KeyError
        node = node[part]
    return node


def _settings_plan(target: Target, port: int, key: str | None, plan: Plan) -> None:
    try:
        current = read_settings_file(plan.settings_file)
    except ConfigError as exc:
        raise SetupError(str(exc)) from exc
    wanted: dict[str, Any] = {"web.gateway": f"http://{LOOPBACK}:{port}"}
    if key:
        wanted["llm.api_key"] = key
    # A stale explicit "off" would keep the agent off the service this command just enabled;
    # null hands the decision back to the gateway's /services.
    service = {"search": "web.search", "scraper": "web.scrape"}.get(target)
    if service and _lookup(current, service) is False:
        wanted[service] = None
    plan.settings_set = {k: v for k, v in wanted.items() if _lookup(current, k) != v}


def plan(
    target: Target,
    *,
    root: Path | None,
    env_file: Path,
    frpc_file: Path | None,
    via: Via = "auto",
    start: bool = True,
) -> Plan:
    """What `openmono setup <target>` would change; touches nothing."""
    if target not in PROFILES:
        raise SetupError(f"unknown setup target {target!r} (gateway, search, scraper)")
    result = Plan(target=target, root=root, env_file=env_file)
    current = read_env(env_file)
    _env_plan(target, current, result)
    stack = _stack_settings()
    mode = "none"
    if start:
        if root is None:
            raise SetupError("starting services needs an OpenMono checkout (or use --no-start)")
        choice = pick(root, env_file, via)
        mode = choice.mode
        if mode == "compose":
            command = _compose_command(root, env_file, PROFILES[target])
            result.bring_up = BringUp("compose", PROFILES[target], command, choice.why)
        else:
            result.bring_up = BringUp("native", PROFILES[target], [], choice.why)
    elif via != "auto":
        mode = via
    if frpc_file is not None and frpc_file.is_file():
        _frpc_plan(frpc_file, stack, mode, result)
    key = current.get(API_KEY_ENV) or result.env_set.get(API_KEY_ENV)
    _settings_plan(target, stack.gateway_port, key, result)
    if target == "search" and mode == "native" and not stack.searxng_upstream.strip():
        result.warnings.append(
            "the native stack runs no SearXNG itself: set SEARXNG_UPSTREAM (host:port of a "
            "running SearXNG) in the .env; until then /services says search=false and the "
            "agent uses its DuckDuckGo fallback"
        )
    return result


def apply(plan: Plan, say: Say) -> None:
    """Perform `plan`: files first (each written atomically, secrets mode 0600), then start."""
    from openmono.setup._bringup import run_compose, run_native

    # one complete .env for compose and the native stack: the example's keys and comments first
    example = plan.root / "compose" / ".env.example" if plan.root is not None else None
    if example is not None and example.is_file() and not plan.env_file.exists():
        write_private(plan.env_file, example.read_text())
    set_env(plan.env_file, plan.env_set)
    if example is not None:
        ensure_compose_env(plan.env_file, example)
    plan.env_file.chmod(0o600)
    if plan.frpc_file is not None and plan.frpc_doc is not None:
        frpc.write(plan.frpc_file, plan.frpc_doc)
    for key, value in plan.settings_set.items():
        try:
            set_value(plan.settings_file, key, "null" if value is None else _json(value))
        except ConfigError as exc:
            raise SetupError(str(exc)) from exc
    if plan.bring_up.mode == "compose":
        run_compose(plan.bring_up, say)
    elif plan.bring_up.mode == "native" and plan.root is not None:
        run_native(plan.root, say)


def _json(value: Any) -> str:
    import json

    return json.dumps(value)
