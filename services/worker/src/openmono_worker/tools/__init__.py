"""OpenMono's tools (the hands): one module per tool, found by the registry.

Public surface: the `Tool` base and its `ToolContext` / `ToolOutcome`, the registry (`registry`,
`get_tool`, `tool_specs`), the glob matcher the tools share (`glob_match`, which the
agent's rules use too), `CallCancelled`, and `is_job_keeper` (which processes are background
jobs, spared when a call's processes are killed). Each tool module (`file_read`, `bash`, ...)
defines a pydantic `Params` model and a `TOOL` instance. Paths go through
`openmono_worker.workspace`.

The tools that change the conversation rather than the workspace (AskUser, TodoWrite, the plan-mode
switches, MemorySave) are not here: they run in the agent (`openmono.conversation`).
"""

from openmono_worker.errors import CallCancelled
from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome
from openmono_worker.tools._globs import glob_match
from openmono_worker.tools._jobs import is_job_keeper
from openmono_worker.tools._registry import get_tool, registry, tool_specs

__all__ = [
    "CallCancelled",
    "Tool",
    "ToolContext",
    "ToolOutcome",
    "get_tool",
    "glob_match",
    "is_job_keeper",
    "registry",
    "tool_specs",
]
