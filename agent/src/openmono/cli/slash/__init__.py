"""Slash commands: the one table every interactive surface shares (`_table`), and the built-ins.

Importing this module registers them, in the order `/help` lists them. Other modules add theirs
the same way (`COMMANDS.register(...)` or `COMMANDS["name"] = (description, handler)`), e.g. the
playbooks' `/playbook`; import them here so every surface sees them. A session's skills and custom
commands come from `COMMANDS.sources`, the playbooks' own `/NAME` from `COMMANDS.fallbacks`.
"""

from __future__ import annotations

from openmono.cli.slash import (
    _context,
    _instructions,
    _memory,
    _model,
    _playbook,
    _project,
    _session,
)
from openmono.cli.slash._playbook import auto_trigger
from openmono.cli.slash._table import (
    COMMANDS,
    Command,
    CommandTable,
    Handler,
    Surface,
    register,
    run_command,
)

__all__ = [
    "COMMANDS",
    "Command",
    "CommandTable",
    "Handler",
    "Surface",
    "auto_trigger",
    "register",
    "run_command",
]
_GROUPS = (_session, _model, _context, _project, _memory, _instructions)

# Playbooks: /playbook, and each user-invocable playbook's own /NAME for names the table lacks.
for _name, _entry in _playbook.COMMANDS.items():
    COMMANDS.register(_name, _entry[0], _entry[1], arg_hint="[NAME k=v ...] [--resume] [--yes]")
COMMANDS.fallbacks.append(_playbook.fallback)
# The session's skills and custom commands answer their own `/NAME` (before any playbook).
COMMANDS.sources.append(_instructions.session_commands)
