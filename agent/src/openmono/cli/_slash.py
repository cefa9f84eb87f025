"""The built-in slash commands, registered into the shared table (`_commands.COMMANDS`).

Importing this module registers them, in the order `/help` lists them. Other modules add theirs
the same way (`COMMANDS.register(...)` or `COMMANDS["name"] = (description, handler)`), e.g. the
playbooks' `/playbook`; import them here so every surface sees them.
"""

from __future__ import annotations

from openmono.cli import (
    _cmd_context,
    _cmd_memory,
    _cmd_model,
    _cmd_project,
    _cmd_session,
    _playbook_slash,
)
from openmono.cli._commands import COMMANDS, Command, Handler, Surface, register, run_command

__all__ = ["COMMANDS", "Command", "Handler", "Surface", "register", "run_command"]
_GROUPS = (_cmd_session, _cmd_model, _cmd_context, _cmd_project, _cmd_memory)

# Playbooks: /playbook, and each user-invocable playbook's own /NAME for names the table lacks.
for _name, _entry in _playbook_slash.COMMANDS.items():
    COMMANDS.register(_name, _entry[0], _entry[1], arg_hint="[NAME k=v ...] [--resume] [--yes]")
COMMANDS.fallbacks.append(_playbook_slash.fallback)
