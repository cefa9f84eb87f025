"""Settings of the agent core, layered from files, the environment and flags.

Precedence, lowest first: `~/.openmono/settings.json` (the user file, under `OPENMONO_DATA_DIR`
when set) → the project's `.openmono/settings.json` → `--config FILE` → env `OPENMONO_*` (and
`LLAMA_API_KEY`) → command-line flags. `openmono config get|set` reads and edits the files through
`get_value` / `set_value`.
"""

from openmono.config._edit import get_value, set_value, settings_file
from openmono.config._errors import ConfigError
from openmono.config._load import (
    find_project_file,
    load_settings,
    project_trust_question,
    read_settings_file,
    user_settings_file,
)
from openmono.config._options import RunOptions
from openmono.config._project_trust import ProjectTrustQuestion
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
    "MODES",
    "AcpSettings",
    "ConfigError",
    "HookCommand",
    "HookSettings",
    "LLMSettings",
    "McpServerSettings",
    "Mode",
    "PermissionSettings",
    "ProjectTrustQuestion",
    "RunOptions",
    "Settings",
    "SubagentSettings",
    "ToolRules",
    "WebSettings",
    "find_project_file",
    "get_value",
    "load_settings",
    "project_trust_question",
    "read_settings_file",
    "record_project_trust",
    "set_value",
    "settings_file",
    "user_settings_file",
]
