"""An agent session, assembled: the layer above the loop, MCP, hooks and sub-agents.

`open_agent(settings, workspace, ...)` builds the loop (`openmono.loop`) with a model, an executor,
permissions and a session file, then plugs in hooks, MCP tools (`openmono.mcp`) and the `Agent`
tool (`openmono.subagents`). It sits above all of them, so none of them imports it: the loop knows
only its extension points (`Toolset`, `ToolHooks`). Surfaces (CLI, ACP) start sessions here.
The system prompt is built here too (`build_system_prompt`), with the user's prompt overrides
(`_prompts`).
"""

from openmono.agent._instructions import load_instructions
from openmono.agent._prompts import (
    PROMPT_KINDS,
    PROMPT_SCOPES,
    PromptKind,
    PromptScope,
    prompt_file,
    prompt_override,
)
from openmono.agent._session import (
    Agent,
    builtin_toolsets,
    open_agent,
    open_model,
    probe_model,
    web_access,
)
from openmono.agent._system_prompt import build_system_prompt, default_base
from openmono.agent._trust import trust_question

__all__ = [
    "PROMPT_KINDS",
    "PROMPT_SCOPES",
    "Agent",
    "PromptKind",
    "PromptScope",
    "build_system_prompt",
    "builtin_toolsets",
    "default_base",
    "load_instructions",
    "open_agent",
    "open_model",
    "probe_model",
    "prompt_file",
    "prompt_override",
    "trust_question",
    "web_access",
]
