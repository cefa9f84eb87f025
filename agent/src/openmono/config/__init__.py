"""Settings: where every value of every command comes from, and the agent core's settings model.

Precedence, highest first, for every command (agent, doctor, status, setup, serve, the stack):
command-line flags → the environment (`OPENMONO_*`, `LLAMA_API_KEY`, the stack's names) → the env
file (`compose/.env` of the checkout, or `OPENMONO_ENV_FILE`) → `--config FILE` → the project's
`.openmono/settings.json` → the user file (`<data dir>/settings.json`) → defaults (the endpoint's
follows `GATEWAY_PORT`). `_environ` reads the process environment and the env file (the only
module that does); `_layers` turns each layer into a settings source; `explain` says which layer
gave each value (`openmono config show`). `openmono config get|set` reads and edits the files
through `get_value` / `set_value`.

Trust: until the user trusted the workspace (`workspace_trusted`, `record_project_trust`), a
project file's settings that could widen a permission, move where the key or the prompt goes, or
run a command are left out (declared per field, `_fieldtrust`), and `Settings.notes` says which.
Other packages gate what a repository brings (playbooks, rules, ...) on `workspace_trusted`.
"""

from openmono.config._edit import get_value, set_value, settings_file
from openmono.config._envfile import (
    ENV_LINE,
    ensure_secret,
    read_env_file,
    set_env,
    unquote,
    write_private,
)
from openmono.config._environ import ENV_FILE_ENV, ROOT_ENV, Environ, env_file_of, find_checkout
from openmono.config._errors import ConfigError
from openmono.config._explain import Resolved, explain_agent, explain_plain
from openmono.config._layers import environ as current_environ
from openmono.config._layers import plain_sources as settings_sources
from openmono.config._load import (
    find_project_file,
    left_out_settings,
    load_settings,
    project_trust_question,
    read_settings_file,
    user_settings_file,
)
from openmono.config._options import RunOptions
from openmono.config._project_trust import ProjectTrustQuestion, workspace_trusted
from openmono.config._project_trust import record as record_project_trust
from openmono.config._settings import (
    MODES,
    AcpSettings,
    HookCommand,
    HookSettings,
    LLMSettings,
    McpServerSettings,
    Mode,
    PermissionSettings,
    Settings,
    SubagentSettings,
    ToolRules,
    WebSettings,
)

__all__ = [
    "ENV_FILE_ENV",
    "ENV_LINE",
    "MODES",
    "ROOT_ENV",
    "AcpSettings",
    "ConfigError",
    "Environ",
    "HookCommand",
    "HookSettings",
    "LLMSettings",
    "McpServerSettings",
    "Mode",
    "PermissionSettings",
    "ProjectTrustQuestion",
    "Resolved",
    "RunOptions",
    "Settings",
    "SubagentSettings",
    "ToolRules",
    "WebSettings",
    "current_environ",
    "ensure_secret",
    "env_file_of",
    "explain_agent",
    "explain_plain",
    "find_checkout",
    "find_project_file",
    "get_value",
    "left_out_settings",
    "load_settings",
    "project_trust_question",
    "read_env_file",
    "read_settings_file",
    "record_project_trust",
    "set_env",
    "set_value",
    "settings_file",
    "settings_sources",
    "unquote",
    "user_settings_file",
    "workspace_trusted",
    "write_private",
]
