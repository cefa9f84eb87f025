"""How MCP tools are named for the model: `mcp__{server}__{tool}`, safe for function names.

OpenAI-compatible servers want `^[a-zA-Z0-9_-]{1,64}$`; other characters become `_`, and a name
past 64 characters keeps its start and a short hash, so two long names never collide.
"""

from __future__ import annotations

import hashlib
import re

PREFIX = "mcp__"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
MAX_LEN = 64


def safe(part: str) -> str:
    return _UNSAFE.sub("_", part) or "_"


def tool_name(server: str, tool: str) -> str:
    name = f"{PREFIX}{safe(server)}__{safe(tool)}"
    if len(name) <= MAX_LEN:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: MAX_LEN - 9]}_{digest}"
