"""What a service of the native stack is (`ServiceSpec`), where a stack run keeps its things
(`Context`), and the facts every service declaration reads: the loopback host, the stack's own
interpreter and tools, the cores, and each routed service's upstreams."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from openmono_contracts.facts import (
    LOOPBACK,
)
from openmono_contracts.routed import LLM, RoutedService

from openmono.stack.errors import StackError
from openmono.stack.health import Probe
from openmono.stack.settings import StackSettings
from openmono.stack.upstreams import parse_upstreams

HOST = LOOPBACK


@dataclass(frozen=True)
class Context:
    """Where things live for this stack run."""

    root: Path
    settings: StackSettings

    def log(self, name: str) -> Path:
        return self.settings.stack_dir / "logs" / f"{name}.log"

    def pidfile(self, name: str) -> Path:
        return self.settings.stack_dir / "pids" / f"{name}.json"


@dataclass(frozen=True)
class ServiceSpec:
    """One service of the stack."""

    name: str
    enabled: Callable[[StackSettings], bool]
    command: Callable[[Context], list[str]]
    port: Callable[[StackSettings], int]
    probe: Callable[[Context], Probe]
    start_timeout_s: float = 60.0
    owns_port: bool = True
    env: Callable[[Context], dict[str, str]] = lambda _ctx: {}
    # ports it binds besides `port` (the gateway's HTTPS listener)
    more_ports: Callable[[StackSettings], tuple[int, ...]] = lambda _s: ()
    # why it is not enabled (said when `up` stops it because it runs but should not)
    off_reason: Callable[[StackSettings], str] = lambda _s: "switched off"
    # why its settings cannot work ("" = they can): `up` stops before starting anything, instead
    # of a start that fails (or, under its keeper, a crash loop)
    check: Callable[[StackSettings], str] = lambda _s: ""
    # settings that work but deserve a word ("" = none): `up` says it before it starts anything
    note: Callable[[StackSettings], str] = lambda _s: ""
    # runs with umask 077 (privatefs): everything it writes on its own lands in the data dir. Off
    # for the tool worker, whose FileWrite/Bash make the user's files with the user's umask.
    private: bool = True

    def address(self, settings: StackSettings) -> str:
        return f"{HOST}:{self.port(settings)}"

    def bound_ports(self, settings: StackSettings) -> tuple[int, ...]:
        """Every port this service binds on HOST."""
        return ((self.port(settings),) if self.owns_port else ()) + self.more_ports(settings)


def stack_python(root: Path) -> str:
    """The interpreter of the stack's Python services: the checkout's own environment, where
    `make setup` installed Caddy, llama.cpp's server, the model and the scrape service (an
    installed `openmono`, `make install`, runs from a tool environment that has none of them),
    else this interpreter."""
    candidate = root / ".venv" / "bin" / "python"
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    return sys.executable


def venv_tool(name: str, root: Path) -> str:
    """A console script of the stack's environment (caddy), of this one, else one on PATH."""
    for folder in (Path(stack_python(root)).parent, Path(sys.executable).parent):
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    raise StackError(
        f"`{name}` not found: run `make setup` (it installs the workspace and its tools)"
    )


def cores() -> int:
    """The cores this process may run on (a container's or taskset's share, not the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def routed_upstreams(s: StackSettings, service: RoutedService) -> list[str]:
    """A routed service's upstreams: its `<PREFIX>_UPSTREAM` list, else the stack's own instance
    (none for a service the stack does not run)."""
    named = parse_upstreams(s.upstream_value(service), service.upstream_env)
    if named or service.native_port_setting is None:
        return named
    if service.key == LLM.key:
        return [f"{HOST}:{s.replica_port(i)}" for i in range(1, s.local_replicas + 1)]
    return [f"{HOST}:{getattr(s, service.native_port_setting)}"]
