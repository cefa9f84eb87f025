"""Which stack's store a key command works on: `--via auto|native|compose`.

auto: a running native gateway, else a Docker engine that answers (the compose project of this
checkout), else the native store (applied when the native gateway starts), as `setup gateway
--rotate-key` decides (`openmono.setup.join.reload_mode`).
"""

from __future__ import annotations

from openmono.keys._backend import Backend, Compose, Native, Say
from openmono.keys._errors import KeysCommandError


def open_backend(via: str, say: Say) -> Backend:
    from openmono.setup import SetupError
    from openmono.setup.join import reload_mode
    from openmono.stack.errors import StackError
    from openmono.stack.settings import env_file_path, find_project_root, load_settings

    try:
        root = find_project_root()
        mode = reload_mode(root, via)
        env_file = env_file_path(root)
    except (StackError, SetupError) as exc:
        raise KeysCommandError(str(exc)) from None
    if mode == "compose":
        from openmono.setup import compose_command

        return Compose(compose_command(root, env_file, "server")[:-2], say)
    settings = load_settings(root)

    def running_gateway() -> tuple[int, str] | None:
        from openmono.stack import runner
        from openmono.stack.process import read_pidfile
        from openmono.stack.services import GATEWAY, HOST, Context

        ctx = Context(root, settings)
        if not runner.is_running(ctx, GATEWAY):
            return None
        record = read_pidfile(ctx.pidfile(GATEWAY.name))
        if record is None:
            return None
        return record.pid, f"http://{HOST}:{settings.gateway_port}"

    return Native(settings.keys_dir, settings.usage_dir, running_gateway, say)
