"""Which stack's store a key command works on: `--via auto|native|compose`.

auto: the stack whose gateway runs (native first), else compose where a Docker engine answers,
else the native store (applied when the native gateway starts): what `setup gateway --rotate-key`
decides too (`openmono.setup.join.reload_mode`).
"""

from __future__ import annotations

from openmono.keys._backend import Backend, Compose, Native, Say
from openmono.keys._errors import KeysCommandError


def open_backend(via: str, say: Say) -> Backend:
    from openmono.errors import OpenMonoError
    from openmono.setup import compose_base
    from openmono.setup.join import reload_mode
    from openmono.stack import (
        GATEWAY,
        HOST,
        Context,
        env_file_path,
        find_project_root,
        load_settings,
        running_pid,
    )

    try:
        root = find_project_root()
        env_file = env_file_path(root)
        mode, _why = reload_mode(root, env_file, via)
        settings = load_settings(root)
        if mode == "compose":
            # compose publishes the gateway on GATEWAY_BIND (loopback unless opted out)
            published = f"http://{HOST}:{settings.gateway_port}"
            return Compose(compose_base(root, env_file), say, published)
    except OpenMonoError as exc:
        raise KeysCommandError(str(exc)) from None
    ctx = Context(root, settings)

    def running_gateway() -> tuple[int, str] | None:
        pid = running_pid(ctx, GATEWAY)
        return None if pid is None else (pid, f"http://{HOST}:{settings.gateway_port}")

    return Native(settings.keys_dir, settings.usage_dir, running_gateway, say)
