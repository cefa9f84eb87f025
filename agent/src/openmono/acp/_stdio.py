"""`openmono acp`: the agent as an ACP server over stdio (protocol version 1), for editors.

Methods: `initialize` (capabilities: load session, embedded context, MCP over stdio/http),
`session/new`, `session/load` (the saved conversation is replayed as updates first),
`session/list`, `session/prompt` (updates stream while the turn runs; the response carries the
stop reason), `session/cancel`, `session/set_mode` (agent / plan / ask). A new or loaded session
announces its slash commands (`available_commands_update`: `/rules`, `/skills`, the skills and
custom commands of the workspace); the session resolves them in the prompt's text. MCP servers
the client passes join the configured ones for that session. Every permission the engine asks
for becomes a `session/request_permission` (allow once / for the session, deny once / for the
session); an AskUser question is put the same way, one option per choice. When the client offers
`fs/read_text_file` / `fs/write_text_file`, FileRead and FileWrite go through the editor. Each
session runs the same loop as the CLI (`open_agent`). Logs go to stderr: stdout is the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any, cast

from acp import (
    PROTOCOL_VERSION,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    SetSessionModeResponse,
    run_agent,
)
from acp.interfaces import Agent as AcpAgent
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    ClientCapabilities,
    Implementation,
    ListSessionsResponse,
    McpCapabilities,
    PermissionOption,
    PromptCapabilities,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    StopReason,
    ToolCallUpdate,
)

from openmono import __version__
from openmono.acp._clientfs import ClientFsExecutor
from openmono.acp._clientmcp import session_manager
from openmono.acp._commands import available_commands
from openmono.acp._live import LiveSession
from openmono.acp._questions import ask_user
from openmono.acp._updates import Update, replay, title_of
from openmono.agent import open_agent
from openmono.config import ConfigError, RunOptions, Settings
from openmono.executor import Executor, ExecutorError, select_executor
from openmono.llm import LLMError
from openmono.loop import Question
from openmono.mcp import McpManager
from openmono.permissions import MODES, Answer, PermissionRequest, PermissionsError
from openmono.sessions import SessionError, SessionStore

MODE_INFO = {
    "agent": ("Agent", "Reads, edits and runs commands (asking where the rules say so)."),
    "plan": ("Plan", "Read-only: investigates and proposes a plan for approval."),
    "ask": ("Ask", "Read-only: answers questions, changes nothing."),
}
PERMISSION_OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Allow for this session", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Deny", kind="reject_once"),
    PermissionOption(option_id="reject_always", name="Deny for this session", kind="reject_always"),
]
ANSWERS: dict[str, Answer] = {
    "allow_once": "once",
    "allow_always": "session",
    "reject_once": "deny",
    "reject_always": "deny_session",
}
STOP_REASONS: dict[str, StopReason] = {
    "max_iterations": "max_turn_requests",
    "cancelled": "cancelled",
}
OPEN_ERRORS = (ConfigError, SessionError, ExecutorError, PermissionsError, LLMError, OSError)


def modes(current: str) -> SessionModeState:
    return SessionModeState(
        current_mode_id=current,
        available_modes=[
            SessionMode(id=m, name=MODE_INFO[m][0], description=MODE_INFO[m][1]) for m in MODES
        ],
    )


def prompt_text(blocks: list[Any]) -> str:
    """The user's message from ACP content blocks (text, links and embedded text resources)."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(f"[file: {block.uri}]")
        elif kind == "resource":
            res = block.resource
            text = getattr(res, "text", None)
            if text is not None:
                parts.append(f"[context: {res.uri}]\n{text}\n[end of {res.uri}]")
            else:
                parts.append(f"[binary resource: {res.uri}]")
        elif kind in ("image", "audio"):
            parts.append(f"[{kind} attached: this model reads text only]")
    return "\n".join(parts).strip()


class OpenMonoAcpAgent:
    """The ACP `Agent` side (see the module docstring)."""

    def __init__(self, opts: RunOptions, *, mcp: Any | None = None) -> None:
        self.opts = opts
        self.mcp = mcp
        self.client: Client | None = None
        self.caps = ClientCapabilities()
        self.sessions: dict[str, LiveSession] = {}

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    # -- setup --------------------------------------------------------------------------------
    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **_: Any,
    ) -> InitializeResponse:
        self.caps = client_capabilities or ClientCapabilities()
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="openmono", title="OpenMono", version=__version__),
        )

    async def authenticate(self, method_id: str, **_: Any) -> None:
        return None

    def _settings(self, cwd: Path) -> Settings:
        from openmono.config import load_settings

        return load_settings(cwd, self.opts.config, self.opts.overrides())

    async def _open(
        self, cwd: str, resume: str | None = None, mcp_servers: Any = None
    ) -> LiveSession:
        workspace = await asyncio.to_thread(Path(cwd).expanduser)
        if not await asyncio.to_thread(workspace.is_dir):
            raise RequestError.invalid_params({"cwd": f"not a directory: {cwd}"})
        holder: dict[str, LiveSession] = {}

        async def approve(request: PermissionRequest) -> Answer:
            return await self._ask(holder["live"], request)

        async def question(asked: Question) -> str:
            return await ask_user(self.client, holder["live"], asked)

        executor: Executor | None = None
        own_mcp: McpManager | None = None
        try:
            settings = self._settings(workspace)
            own_mcp = await session_manager(settings, mcp_servers)
            executor = select_executor(settings)
            fs = self.caps.fs
            if (
                self.client is not None
                and fs is not None
                and (fs.read_text_file or fs.write_text_file)
            ):
                executor = ClientFsExecutor(
                    executor, self.client, "", read=bool(fs.read_text_file),
                    write=bool(fs.write_text_file),
                )  # fmt: skip
            agent = await open_agent(
                settings, workspace, resume=resume, mode=self.opts.mode, allow=self.opts.allow,
                yolo=self.opts.yolo, approver=approve, asker=question, executor=executor,
                mcp=own_mcp or (self.mcp if self.mcp else None),
            )  # fmt: skip
        except OPEN_ERRORS as exc:
            if executor is not None:
                await executor.aclose()
            if own_mcp is not None:
                await own_mcp.aclose()
            raise RequestError.internal_error({"message": f"{type(exc).__name__}: {exc}"}) from exc
        if isinstance(executor, ClientFsExecutor):
            executor.session_id = agent.session_id
        live = LiveSession(agent, self._sender(agent.session_id), executor=executor, mcp=own_mcp)
        holder["live"] = live
        self.sessions[agent.session_id] = live
        return live

    def _sender(self, session_id: str) -> Any:
        async def send(update: Update) -> None:
            if self.client is not None:
                await self.client.session_update(session_id=session_id, update=update)

        return send

    def _live(self, session_id: str) -> LiveSession:
        live = self.sessions.get(session_id)
        if live is None:
            raise RequestError.invalid_params({"sessionId": f"no open session {session_id!r}"})
        return live

    # -- sessions -----------------------------------------------------------------------------
    async def new_session(self, cwd: str, mcp_servers: Any = None, **_: Any) -> NewSessionResponse:
        live = await self._open(cwd, mcp_servers=mcp_servers)
        # Queued last, with no await before the return: the SDK queues the response first, so
        # the client knows the session id when the commands arrive.
        live.push(available_commands(live.agent))
        return NewSessionResponse(session_id=live.session_id, modes=modes(live.mode))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **_: Any
    ) -> LoadSessionResponse:
        old = self.sessions.pop(session_id, None)
        if old is not None:
            await old.aclose()
        live = await self._open(cwd, resume=session_id, mcp_servers=mcp_servers)
        loaded = live.agent.store.load(live.session_id)
        for update in replay(loaded.messages, live.translator.kind_of):
            live.push(update)
        live.push(available_commands(live.agent))
        await live.flush()
        return LoadSessionResponse(modes=modes(live.mode))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_: Any
    ) -> ListSessionsResponse:
        try:
            settings = self._settings(Path(cwd) if cwd else Path.cwd())
        except ConfigError as exc:
            raise RequestError.internal_error({"message": str(exc)}) from exc
        rows = SessionStore(settings.data_dir).list_sessions()
        want = str(await asyncio.to_thread(Path(cwd).resolve)) if cwd else None
        infos = [
            SessionInfo(
                session_id=r.session_id, cwd=r.working_directory or str(Path.cwd()),
                title=r.title, updated_at=r.updated_at,
            )
            for r in rows
            if want is None or r.working_directory == want
        ]  # fmt: skip
        return ListSessionsResponse(sessions=infos)

    async def set_session_mode(
        self, session_id: str, mode_id: str, **_: Any
    ) -> SetSessionModeResponse:
        live = self._live(session_id)
        if mode_id not in MODES:
            raise RequestError.invalid_params({"modeId": f"one of {', '.join(MODES)}"})
        live.agent.loop.set_mode(mode_id)
        live.sync_mode()
        await live.flush()
        return SetSessionModeResponse()

    # -- turns --------------------------------------------------------------------------------
    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        live = self._live(session_id)
        if live.busy:
            raise RequestError.invalid_request({"message": "a prompt is already running"})
        text = prompt_text(prompt)
        if not text:
            raise RequestError.invalid_params({"prompt": "no text in the prompt"})
        live.cancelled = False
        # the user's own words, not the files the editor attached, say whether the turn only reads
        said = "\n".join(b.text for b in prompt if getattr(b, "type", None) == "text")
        live.task = asyncio.create_task(live.agent.run_turn(text, live.emit, said=said))
        try:
            done = await live.task
        except asyncio.CancelledError:
            if not live.cancelled:
                raise
            await live.flush()
            return PromptResponse(stop_reason="cancelled")
        await live.flush()
        return PromptResponse(stop_reason=STOP_REASONS.get(done.reason, "end_turn"))

    async def cancel(self, session_id: str, **_: Any) -> None:
        live = self.sessions.get(session_id)
        if live is not None:
            await live.cancel()

    async def _ask(self, live: LiveSession, request: PermissionRequest) -> Answer:
        await live.flush()
        if self.client is None:
            return "deny"
        args = dict(request.arguments)
        call = ToolCallUpdate(
            tool_call_id=request.call_id,
            title=f"{title_of(request.tool, args)} ({request.reason})",
            kind=live.translator.kind_of(request.tool),
            status="pending",
            raw_input=args,
        )
        response = await self.client.request_permission(
            session_id=live.session_id, tool_call=call, options=PERMISSION_OPTIONS
        )
        outcome = response.outcome
        if isinstance(outcome, AllowedOutcome):
            return ANSWERS.get(outcome.option_id, "deny")
        return "deny"

    async def aclose(self) -> None:
        for live in list(self.sessions.values()):
            with contextlib.suppress(Exception):
                await live.aclose()
        self.sessions.clear()
        if self.mcp is not None:
            await self.mcp.aclose()


async def serve_stdio(opts: RunOptions) -> None:
    """Run the ACP agent on this process's stdin/stdout until the client closes them."""
    mcp = None
    try:
        settings = opts.settings()
        if any(s.enabled for s in settings.mcp_servers.values()):
            from openmono.mcp import McpManager

            mcp = McpManager(settings.mcp_servers, log_dir=settings.data_dir / "logs" / "mcp")
            mcp.start()
    except ConfigError:
        mcp = None  # each session reports its own configuration error
    agent = OpenMonoAcpAgent(opts, mcp=mcp)
    try:
        # The SDK's Agent protocol lists every optional method; the router skips missing ones.
        await run_agent(cast(AcpAgent, agent))
    finally:
        await agent.aclose()
