"""Where every setting comes from: the process environment, the env file and the checkout.

Every command (the agent, doctor, status, setup, serve, the stack) resolves a setting the same
way, highest first:

    flags  >  environment  >  the env file  >  user / project settings files  >  defaults

- The env file is `OPENMONO_ENV_FILE`, else `<checkout>/compose/.env`: the one file compose reads
  too, so one file configures both. In it an empty value means "not set here" (the example ships
  empty keys that mean "the default"); in the environment an empty value is a value
  (`OPENMONO_BROKER_URL= openmono ...` runs without the broker that the file names).
- The checkout (what `openmono up|down|status|setup` run from): `OPENMONO_ROOT`, else the checkout
  this package is installed from (`make install` installs it editable), else the current
  directory or a parent of it that holds `caddy/Caddyfile`.

This is the one module of the agent that reads `os.environ`; everything else gets an `Environ`
(a test holds that).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from openmono_contracts.facts import DATA_DIR_ENV, DEFAULT_DATA_DIR, GATEWAY_PORT, LOOPBACK

from openmono.config._envfile import read_env_file
from openmono.config._errors import ConfigError

# Values of compose/.env that name this compose project's own gateway by its name in the compose
# network. Natively they mean the same gateway, this box's own (`127.0.0.1:GATEWAY_PORT`), and
# stay a value of the env file: read as "not set" they let a settings file below it (a
# project's) choose where the key and the prompt go.
COMPOSE_ONLY = {"OPENMONO_LLM_ENDPOINT": "http://caddy:8080"}
GATEWAY_PORT_ENV = "GATEWAY_PORT"
ROOT_ENV = "OPENMONO_ROOT"
ENV_FILE_ENV = "OPENMONO_ENV_FILE"
MARKER = Path("caddy") / "Caddyfile"
# agent/src/openmono/config/_environ.py -> the checkout, when the package runs from one
_PACKAGE_CHECKOUT = Path(__file__).resolve().parents[4]


@dataclass(frozen=True)
class Environ:
    """One snapshot of what the settings are resolved from (see the module docstring)."""

    process: Mapping[str, str]
    # the env file's non-empty values
    file: Mapping[str, str]
    file_path: Path | None
    checkout: Path | None
    # why no checkout was found (a bad OPENMONO_ROOT says so, instead of being skipped)
    checkout_problem: str

    def get(self, name: str) -> str | None:
        """`name` from the environment, else the env file, else None."""
        if name in self.process:
            return self.process[name]
        return self.file.get(name)

    def origin(self, name: str) -> str | None:
        """Where `get(name)` comes from: "environment", "env file" or None (not set)."""
        if name in self.process:
            return "environment"
        return "env file" if name in self.file else None

    def data_dir(self) -> Path:
        """`OPENMONO_DATA_DIR` (environment, then env file), else `~/.openmono`."""
        return Path(self.get(DATA_DIR_ENV) or DEFAULT_DATA_DIR).expanduser()

    def require_checkout(self) -> Path:
        """The checkout, or a ConfigError that says how to name one."""
        if self.checkout is None:
            raise ConfigError(self.checkout_problem)
        return self.checkout

    def child_environment(self) -> dict[str, str]:
        """A copy of the process environment, for a child process of the stack."""
        return dict(self.process)


def _is_checkout(folder: Path) -> bool:
    return (folder / MARKER).is_file()


def find_checkout(process: Mapping[str, str], cwd: Path | None = None) -> tuple[Path | None, str]:
    """The checkout and, when there is none, why (see the module docstring for the order)."""
    named = process.get(ROOT_ENV, "").strip()
    if named:
        root = Path(named).expanduser().resolve()
        if _is_checkout(root):
            return root, ""
        return None, f"{ROOT_ENV}={named} holds no {MARKER}: point it at an OpenMono checkout"
    if _is_checkout(_PACKAGE_CHECKOUT):
        return _PACKAGE_CHECKOUT, ""
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if _is_checkout(folder):
            return folder, ""
    return None, (
        "no OpenMono checkout found: this openmono is not installed from one (`make install` in "
        f"the checkout does that), and no {MARKER} is here or above; set {ROOT_ENV}=PATH to the "
        "checkout"
    )


def env_file_of(process: Mapping[str, str], checkout: Path | None) -> Path | None:
    """`OPENMONO_ENV_FILE`, else `<checkout>/compose/.env`, else None (no checkout)."""
    named = process.get(ENV_FILE_ENV, "").strip()
    if named:
        return Path(named).expanduser()
    return checkout / "compose" / ".env" if checkout is not None else None


def native_values(values: Mapping[str, str], process: Mapping[str, str]) -> dict[str, str]:
    """The env file's values as the native agent reads them: empty ones dropped, compose-only
    gateway names turned into this box's own gateway."""
    port = (process.get(GATEWAY_PORT_ENV) or values.get(GATEWAY_PORT_ENV) or "").strip() or str(
        GATEWAY_PORT
    )
    out = {}
    for key, value in values.items():
        if value == "":
            continue
        out[key] = f"http://{LOOPBACK}:{port}" if COMPOSE_ONLY.get(key) == value else value
    return out


def current(cwd: Path | None = None) -> Environ:
    """The environment of this process and its env file, read now."""
    process = dict(os.environ)
    checkout, problem = find_checkout(process, cwd)
    path = env_file_of(process, checkout)
    values = read_env_file(path) if path is not None else {}
    return Environ(
        process=process,
        file=native_values(values, process),
        file_path=path,
        checkout=checkout,
        checkout_problem=problem,
    )
