"""The native stack: the gateway and its services as local processes (`openmono up|down|status`).

The rest of the agent uses the stack through the names below and nowhere else:

    settings     StackSettings, load_settings, env_file_path, find_project_root
    services     Context (root + settings), ServiceSpec, HOST, GATEWAY
    runner       up, down, restart, is_running, running_pid
    applied      read_applied (the settings the running stack was brought up with), drift
    status       status_rows (one row per service, for `openmono status`), running_anything, Row
    env file     read_env, set_env, ensure_compose_env, ensure_secret, is_placeholder,
                 write_private
    TLS          ca_cert_path
    llama.cpp    default_model_path, ModelNotFoundError, SMOLLM2_TEMPLATE (the chat template with
                 tools for the bundled model; `llama_server` is also the process the stack
                 starts, `python -m openmono.stack.llama_server`)
    errors       StackError

Each name is imported on first use, so a process that needs one part (the llama-server launcher,
`openmono setup`) does not pay for the others (httpx, pydantic-settings, the process table).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openmono.stack.applied import drift, read_applied
    from openmono.stack.envfile import (
        ensure_compose_env,
        ensure_secret,
        is_placeholder,
        read_env,
        set_env,
        write_private,
    )
    from openmono.stack.errors import StackError
    from openmono.stack.llama_server import SMOLLM2_TEMPLATE, ModelNotFoundError, default_model_path
    from openmono.stack.runner import down, is_running, restart, running_pid, up
    from openmono.stack.services import GATEWAY
    from openmono.stack.settings import (
        StackSettings,
        env_file_path,
        find_project_root,
        load_settings,
    )
    from openmono.stack.spec import HOST, Context, ServiceSpec
    from openmono.stack.status import Row, running_anything
    from openmono.stack.status import status as status_rows
    from openmono.stack.tls import ca_cert_path

__all__ = [
    "GATEWAY",
    "HOST",
    "SMOLLM2_TEMPLATE",
    "Context",
    "ModelNotFoundError",
    "Row",
    "ServiceSpec",
    "StackError",
    "StackSettings",
    "ca_cert_path",
    "default_model_path",
    "down",
    "drift",
    "ensure_compose_env",
    "ensure_secret",
    "env_file_path",
    "find_project_root",
    "is_placeholder",
    "is_running",
    "load_settings",
    "read_applied",
    "read_env",
    "restart",
    "running_anything",
    "running_pid",
    "set_env",
    "status_rows",
    "up",
    "write_private",
]

# name -> (module, name there)
_HOME: dict[str, tuple[str, str]] = {
    **{n: ("envfile", n) for n in ("ensure_compose_env", "ensure_secret", "is_placeholder")},
    **{n: ("envfile", n) for n in ("read_env", "set_env", "write_private")},
    **{n: ("applied", n) for n in ("drift", "read_applied")},
    "StackError": ("errors", "StackError"),
    "ModelNotFoundError": ("llama_server", "ModelNotFoundError"),
    "default_model_path": ("llama_server", "default_model_path"),
    "SMOLLM2_TEMPLATE": ("llama_server", "SMOLLM2_TEMPLATE"),
    **{n: ("runner", n) for n in ("down", "is_running", "restart", "running_pid", "up")},
    **{n: ("services", n) for n in ("GATEWAY", "HOST", "Context", "ServiceSpec")},
    **{n: ("settings", n) for n in ("StackSettings", "env_file_path", "find_project_root")},
    "load_settings": ("settings", "load_settings"),
    "Row": ("status", "Row"),
    "running_anything": ("status", "running_anything"),
    "status_rows": ("status", "status"),
    "ca_cert_path": ("tls", "ca_cert_path"),
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'openmono.stack' has no attribute {name!r}")
    module = importlib.import_module(f"openmono.stack.{home[0]}")
    value = getattr(module, home[1])
    globals()[name] = value
    return value
