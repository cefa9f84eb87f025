"""ACP surfaces for editors: over stdio (`openmono acp`) and over HTTP/SSE (`openmono serve`).

`OpenMonoAcpAgent` speaks the Agent Client Protocol (version 1) with the `agent-client-protocol`
SDK; `create_app` is the HTTP/SSE server. Both open sessions with `openmono.agent.open_agent`, so
editors drive the very loop the CLI runs; `Translator` maps its events to ACP updates.
"""

from openmono.acp._clientfs import ClientFsExecutor
from openmono.acp._errors import AcpError
from openmono.acp._http import create_app, run_server, sse_frame
from openmono.acp._live import LiveSession
from openmono.acp._stdio import OpenMonoAcpAgent, prompt_text, serve_stdio
from openmono.acp._token import resolve_token
from openmono.acp._updates import Translator, replay

__all__ = [
    "AcpError",
    "ClientFsExecutor",
    "LiveSession",
    "OpenMonoAcpAgent",
    "Translator",
    "create_app",
    "prompt_text",
    "replay",
    "resolve_token",
    "run_server",
    "serve_stdio",
    "sse_frame",
]
