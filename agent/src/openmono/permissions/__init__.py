"""Permissions and modes: who may run which tool call, decided when the call executes.

`PermissionEngine` orders built-in denials, session choices and config rules (deny > ask > allow);
`mode_denial` keeps plan and ask modes read-only; `is_safe_read_only` knows harmless shell commands;
`read_only_task` and `writes_call` are the safety floor (no write in a task that only reads).
A denial becomes a `ToolResult` the model reads (see `openmono.loop`).
"""

from openmono.config import MODES, Mode
from openmono.permissions._bash import dangerous_reason, is_safe_read_only
from openmono.permissions._builtin import builtin_denial, is_protected
from openmono.permissions._engine import (
    Action,
    Answer,
    Approver,
    Decision,
    PermissionEngine,
    PermissionRequest,
    non_interactive_message,
    parse_allow_spec,
    session_pattern,
)
from openmono.permissions._errors import PermissionsError
from openmono.permissions._floor import (
    CHANGE_VERBS,
    FLOOR_MESSAGE,
    asks_change,
    change_verbs,
    read_only_task,
    writes_call,
)
from openmono.permissions._modes import mode_denial, offered_in
from openmono.permissions._subjects import call_paths, pattern_matches, resolve_path

__all__ = [
    "CHANGE_VERBS",
    "FLOOR_MESSAGE",
    "MODES",
    "Action",
    "Answer",
    "Approver",
    "Decision",
    "Mode",
    "PermissionEngine",
    "PermissionRequest",
    "PermissionsError",
    "asks_change",
    "builtin_denial",
    "call_paths",
    "change_verbs",
    "dangerous_reason",
    "is_protected",
    "is_safe_read_only",
    "mode_denial",
    "non_interactive_message",
    "offered_in",
    "parse_allow_spec",
    "pattern_matches",
    "read_only_task",
    "resolve_path",
    "session_pattern",
    "writes_call",
]
