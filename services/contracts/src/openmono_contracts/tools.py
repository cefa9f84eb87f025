"""Agent <-> tool worker contract (docs/architecture.md §7): one request in, one result out, JSON
only."""

from typing import Any, Literal, Self

from pydantic import BaseModel, Field, model_validator

from openmono_contracts.routing import Route
from openmono_contracts.sandbox import SandboxPolicy

# Why a call failed, for whoever reads results without parsing messages (the agent counts
# invalid and unknown calls; a surface may show a refusal apart from a failure):
#   invalid_params  the arguments do not fit the tool's parameters (the message names them)
#   unknown_tool    no tool has that name
#   denied          refused where the tool runs (a path outside the workspace, another route)
#   timeout         the call ran out of time
#   cancelled       stopped on request
#   unavailable     nothing could run it (the worker unreachable or lost, the executor closed)
#   failed          the tool ran and failed (a command's exit code, a server's error, ...)
#   internal        a bug in the tool (an exception it did not expect)
ToolErrorKind = Literal[
    "invalid_params",
    "unknown_tool",
    "denied",
    "timeout",
    "cancelled",
    "unavailable",
    "failed",
    "internal",
]


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
    # The user trusted the workspace (openmono.config.workspace_trusted): a tool may start what
    # runs the workspace's own code (a language server that builds it); set by the agent.
    workspace_trusted: bool = False
    # The OS sandbox a shell call must run in (openmono_contracts.sandbox): set by the agent's
    # permission engine, enforced by the worker, which refuses the call where it cannot be.
    sandbox: SandboxPolicy | None = None
    # The files this session has read or written, as its calls named them (set by the agent's
    # loop on calls of tools that write). FileWrite refuses to overwrite an existing file not
    # among them: a blind overwrite is how a small model that picked "write" for "change X"
    # loses the file. None: the caller keeps no such record (a playbook script, a probe), and
    # nothing is checked.
    known_files: list[str] | None = None


class ToolResult(BaseModel):
    """What a tool call produced. `ok=False` results carry a message the model can act on."""

    call_id: str
    ok: bool
    output: str = ""
    error: str | None = None
    truncated: bool = False
    artifact: str | None = None
    elapsed_ms: float = 0.0
    # None when `ok`; a failure that names no kind counts as `failed`.
    error_kind: ToolErrorKind | None = None

    @model_validator(mode="after")
    def _kind_of_failure(self) -> Self:
        if self.ok:
            self.error_kind = None
        elif self.error_kind is None:
            self.error_kind = "failed"
        return self
