"""Hooks: commands from the settings run at session start, around tool calls and after turns.

`HookRunner` implements the loop's `ToolHooks` extension point (pre/post tool use) and the
session-level events; `run_hook` runs one command in its own process group with a timeout.
"""

from openmono.hooks._errors import HookError
from openmono.hooks._process import HookRun, run_hook
from openmono.hooks._runner import HookRunner

__all__ = ["HookError", "HookRun", "HookRunner", "run_hook"]
