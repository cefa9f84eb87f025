"""OpenMono's hands: the tool implementations and the Celery app that runs them against a workspace.

Entry points: `run_tool(ToolRequest) -> ToolResult` (used in-process by the agent's local executor
and by the Celery task alike) and `tool_specs()` (what the agent advertises to the model).
"""

from openmono_worker.errors import PathRefused, ToolError, WorkerError
from openmono_worker.runner import run_tool, tool_specs
from openmono_worker.settings import WorkerSettings

__all__ = [
    "PathRefused",
    "ToolError",
    "WorkerError",
    "WorkerSettings",
    "run_tool",
    "tool_specs",
]
