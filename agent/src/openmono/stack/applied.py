"""The settings the running native stack was brought up with.

`openmono status` used to read the shell's settings: run from a shell with other ports or another
replica count than `up` had, it probed addresses nothing listened on and listed rows the stack
does not have. `up` now records what it applied once every service is healthy, `down` forgets
it, and `status` shows the stack by the record and names what this shell would change.

The record holds the keys too (status must present them to the gateway and the router), so it
is written like the env file: atomically, mode 0600, in the private data dir.
"""

from __future__ import annotations

import json
from pathlib import Path

from openmono_contracts import facts
from pydantic import SecretStr, ValidationError
from pydantic_core import to_jsonable_python

from openmono.config import write_private
from openmono.stack.settings import StackSettings


def applied_path(settings: StackSettings) -> Path:
    return settings.stack_dir / "applied.json"


def record_applied(settings: StackSettings) -> None:
    values = {
        name: value.get_secret_value() if isinstance(value, SecretStr) else value
        for name, value in ((n, getattr(settings, n)) for n in type(settings).model_fields)
    }
    text = json.dumps(to_jsonable_python(values), indent=1, sort_keys=True)
    write_private(applied_path(settings), text + "\n")


def forget_applied(settings: StackSettings) -> None:
    applied_path(settings).unlink(missing_ok=True)


def read_applied(settings: StackSettings) -> StackSettings | None:
    """The settings `up` applied in this data dir, or None: none recorded, or a record this
    version cannot read (status then falls back on the shell's settings)."""
    try:
        values = json.loads(applied_path(settings).read_text())
        return StackSettings(_env_file=None, **values)
    except (OSError, ValueError, TypeError, ValidationError):
        return None


def drift(shell: StackSettings, running: StackSettings) -> list[str]:
    """What `up` from this shell would change, one item per setting (secrets by name only)."""
    here, there = shell.as_env(), running.as_env()
    out = []
    for name in sorted(here.keys() | there.keys()):
        if here.get(name) == there.get(name):
            continue
        if name in facts.SECRET_NAMES or isinstance(getattr(shell, name.lower()), SecretStr):
            out.append(f"{name} (a secret)")
        else:
            out.append(f"{name}={here.get(name, '')!r} here, {there.get(name, '')!r} running")
    return out
