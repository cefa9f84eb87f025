"""Sub-agents: the `Agent` tool runs a typed child loop with a fresh context for one task.

Types (`AGENT_TYPES`): general-purpose, Explore, Plan, Coder, Verify, each choosing the parent's
tools by their facts (what reads, writes, runs commands, reaches the web, knows the code), with a
mode and a turn cap. `AgentTool` is the loop `Toolset` that serves `Agent`.
"""

from openmono.subagents._errors import SubagentError
from openmono.subagents._tool import NAME, AgentTool, Params, agent_spec
from openmono.subagents._types import AGENT_TYPES, AgentType, get_type

__all__ = [
    "AGENT_TYPES",
    "NAME",
    "AgentTool",
    "AgentType",
    "Params",
    "SubagentError",
    "agent_spec",
    "get_type",
]
