"""Agent <-> tool worker contract (DESIGN.md §7): one request in, one result out, JSON only."""

from typing import Any

from pydantic import BaseModel, Field

from openmono_contracts.effects import ToolEffect
from openmono_contracts.routing import Route


class WebAccess(BaseModel):
    """How the web tools reach the gateway; resolved by the agent, used by the worker."""

    gateway: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    search: bool | None = None
    scrape: bool | None = None
    # the gateway's CA certificate (PEM, already loaded by the agent): the worker verifies its
    # gateway calls against it alone (openmono_contracts.trust); None: the system's trust
    ca: str | None = Field(default=None, repr=False)
    # plain http:// to a gateway beyond loopback allowed (the agent's --insecure-http)
    insecure_http: bool = False
    # the user let calls nobody approved leave this box without the gateway (`web.public_fallback`):
    # WebSearch's DuckDuckGo fallback, and the direct fetch of the pages its read_top reads
    public_fallback: bool = False


class ToolRequest(BaseModel):
    """One tool call to execute against a workspace."""

    tool: str
    params: dict[str, Any] = Field(default_factory=dict)
    call_id: str
    session_id: str
    workspace: str
    timeout_s: float = Field(default=120.0, gt=0, le=3600)
    web: WebAccess = Field(default_factory=WebAccess)
    # Which workers may run it (openmono_contracts.routing); set by the Celery executor, checked
    # by the worker, unused in-process.
    route: Route | None = None
    # Folders outside the workspace the read-only tools may read in this call: the folders of
    # skills the session loaded from the user's own skill folders (`~/.agents/skills/x`).
    read_roots: list[str] = Field(default_factory=list)


class ToolResult(BaseModel):
    """What a tool call produced. `ok=False` results carry a message the model can act on."""

    call_id: str
    ok: bool
    output: str = ""
    error: str | None = None
    truncated: bool = False
    artifact: str | None = None
    elapsed_ms: float = 0.0
    # Set only by agent-side tools (AskUser, TodoWrite, plan mode, MemorySave); see effects.py.
    effect: ToolEffect | None = None
