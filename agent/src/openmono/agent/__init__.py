"""An agent session, assembled: the layer above the loop, MCP, hooks and sub-agents.

`open_agent(settings, workspace, ...)` builds the loop (`openmono.loop`) with a model, an executor,
permissions and a session file, then plugs in hooks, MCP tools (`openmono.mcp`) and the `Agent`
tool (`openmono.subagents`). It sits above all of them, so none of them imports it: the loop knows
only its extension points (`Toolset`, `ToolHooks`). Surfaces (CLI, ACP) start sessions here.
"""

from openmono.agent._session import Agent, open_agent, open_model, probe_model, web_access

__all__ = ["Agent", "open_agent", "open_model", "probe_model", "web_access"]
