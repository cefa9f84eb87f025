"""ACP over HTTP/SSE (`openmono serve`): sessions as resources, a turn as a server-sent stream.

Routes (all but discovery want `Authorization: Bearer <token>`; else 401 JSON):
    GET    /api/v1/discovery                 what this server is and speaks (no auth, no secrets)
    GET    /api/v1/sessions                  open sessions first, then saved ones
    POST   /api/v1/sessions                  {cwd?, mode?, resume?, allow?, yolo?} → 201 the session
    GET    /api/v1/sessions/{id}             one session (open or saved)
    DELETE /api/v1/sessions/{id}             close it (a running turn is cancelled) and delete it
    GET    /api/v1/sessions/{id}/messages    the recorded conversation
    POST   /api/v1/sessions/{id}/turn        {prompt, mode?} → `text/event-stream`: one frame per
                                             loop event, `event: <kind>` + `data: <json>`, ending
                                             with `event: done`; a second turn meanwhile gets 409
    POST   /api/v1/sessions/{id}/cancel      cancel the running turn
Nobody can answer a permission prompt over this API: asks are denied with a message the model reads,
unless the session was opened with `allow` rules or `yolo` (as `-p` runs work). A client that
disconnects mid-turn cancels the turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from openmono import __version__
from openmono.acp._errors import AcpError
from openmono.acp._tls import ServerCert, beyond_loopback, ensure_cert
from openmono.acp._token import resolve_token
from openmono.agent import Agent, open_agent
from openmono.config import ConfigError, RunOptions, Settings, current_environ, load_settings
from openmono.executor import ExecutorError
from openmono.llm import LLMError
from openmono.loop import LoopEvent, TurnDone
from openmono.permissions import MODES, Mode, PermissionsError
from openmono.sessions import SessionError, SessionStore

log = logging.getLogger("openmono.acp.http")
API = "/api/v1"
KEEPALIVE_S = 15.0
OPEN_ERRORS = (
    AcpError,
    ConfigError,
    SessionError,
    ExecutorError,
    PermissionsError,
    LLMError,
    OSError,
)


class NewSession(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cwd: str | None = None
    mode: Mode | None = None
    resume: str | None = None
    allow: list[str] = Field(default_factory=list)
    yolo: bool = False


class TurnRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(min_length=1)
    mode: Mode | None = None


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": code, "message": message}, status_code=status)


def sse_frame(event: str, data: Any) -> bytes:
    """One server-sent event; `data` is JSON on a single line."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


class _Auth:
    """Bearer check as plain ASGI (no wrapping of the response: SSE streams pass untouched)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] != f"{API}/discovery":
            headers = dict(scope["headers"])
            if not secrets.compare_digest(headers.get(b"authorization", b""), self.expected):
                response = _error(401, "unauthorized", "send Authorization: Bearer <token>")
                response.headers["WWW-Authenticate"] = "Bearer"
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class Hub:
    """The open sessions of one server."""

    def __init__(self, opts: RunOptions, settings: Settings, mcp: Any | None = None) -> None:
        self.opts = opts
        self.settings = settings
        self.mcp = mcp
        self.live: dict[str, Agent] = {}
        self.turns: dict[str, asyncio.Task[TurnDone]] = {}
        self.store = SessionStore(settings.data_dir)

    def _settings_for(self, cwd: Path) -> Settings:
        return load_settings(cwd, self.opts.config, self.opts.overrides())

    async def open(self, body: NewSession) -> Agent:
        raw = body.cwd or str(self.opts.workspace_dir(self.settings))
        cwd = await asyncio.to_thread(Path(raw).expanduser)
        if not await asyncio.to_thread(cwd.is_dir):
            raise AcpError(f"cwd is not a directory: {cwd}")
        settings = await asyncio.to_thread(self._settings_for, cwd)
        agent = await open_agent(
            settings, cwd, resume=body.resume, mode=body.mode or self.opts.mode,
            allow=[*self.opts.allow, *body.allow], yolo=self.opts.yolo or body.yolo,
            mcp=self.mcp if self.mcp else None,
        )  # fmt: skip
        self.live[agent.session_id] = agent
        return agent

    def describe(self, session_id: str) -> dict[str, Any] | None:
        agent = self.live.get(session_id)
        if agent is not None:
            return {
                "session_id": session_id,
                "live": True,
                "busy": self.busy(session_id),
                "mode": agent.loop.mode,
                "workspace": str(agent.workspace),
                "model": agent.info.model if agent.info else None,
                "n_ctx": agent.loop.options.n_ctx,
                "messages": len(agent.loop.conv.messages),
            }
        try:
            loaded = self.store.load(session_id)
        except SessionError:
            return None
        if loaded.header.session_id != session_id:
            return None
        return {
            "session_id": session_id,
            "live": False,
            "busy": False,
            "mode": loaded.header.mode,
            "workspace": loaded.header.working_directory,
            "model": loaded.header.model,
            "messages": len(loaded.messages),
        }

    def busy(self, session_id: str) -> bool:
        task = self.turns.get(session_id)
        return task is not None and not task.done()

    async def cancel(self, session_id: str) -> bool:
        task = self.turns.get(session_id)
        if task is None or task.done():
            return False
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        return True

    async def close(self, session_id: str) -> None:
        await self.cancel(session_id)
        agent = self.live.pop(session_id, None)
        if agent is not None:
            await agent.aclose()

    async def aclose(self) -> None:
        for session_id in list(self.live):
            await self.close(session_id)
        if self.mcp is not None:
            await self.mcp.aclose()


def create_app(
    opts: RunOptions, settings: Settings, token: str, mcp: Any | None = None
) -> Starlette:
    """The ASGI app; `mcp` is a started `McpManager` shared by every session (or None)."""
    hub = Hub(opts, settings, mcp)

    async def discovery(request: Request) -> Response:
        return JSONResponse(
            {
                "name": "openmono",
                "version": __version__,
                "protocol": "acp-http",
                "protocol_version": 1,
                "auth": "bearer",
                "modes": list(MODES),
                "capabilities": {"load_session": True, "streaming": "sse", "cancel": True},
                "mcp": hub.mcp.status() if hub.mcp else {},
            }
        )

    async def list_sessions(request: Request) -> Response:
        rows = [d for s in hub.live if (d := hub.describe(s))]
        for row in await asyncio.to_thread(hub.store.list_sessions):
            if row.session_id not in hub.live:
                rows.append(
                    {
                        "session_id": row.session_id,
                        "live": False,
                        "title": row.title,
                        "workspace": row.working_directory,
                        "updated_at": row.updated_at,
                        "model": row.model,
                    }
                )
        return JSONResponse({"sessions": rows})

    async def create_session(request: Request) -> Response:
        try:
            raw = await request.body()
            body = NewSession.model_validate_json(raw or b"{}")
        except ValidationError as exc:
            return _error(422, "invalid_request", str(exc.errors()[0]["msg"]))
        try:
            agent = await hub.open(body)
        except OPEN_ERRORS as exc:
            return _error(400, "cannot_open", f"{type(exc).__name__}: {exc}")
        return JSONResponse(hub.describe(agent.session_id), status_code=201)

    async def get_session(request: Request) -> Response:
        found = hub.describe(request.path_params["sid"])
        if found is None:
            return _error(404, "not_found", "no such session")
        return JSONResponse(found)

    async def delete_session(request: Request) -> Response:
        sid = request.path_params["sid"]
        if hub.describe(sid) is None:
            return _error(404, "not_found", "no such session")
        await hub.close(sid)
        path = hub.store.path_for(sid)
        with contextlib.suppress(FileNotFoundError):
            await asyncio.to_thread(path.unlink)
        await asyncio.to_thread(shutil.rmtree, hub.store.root / sid, True)
        return Response(status_code=204)

    async def messages(request: Request) -> Response:
        sid = request.path_params["sid"]
        if hub.describe(sid) is None:
            return _error(404, "not_found", "no such session")
        loaded = await asyncio.to_thread(hub.store.load, sid)
        return JSONResponse(
            {
                "session_id": sid,
                "header": loaded.header.model_dump(mode="json"),
                "messages": [m.model_dump(mode="json") for m in loaded.messages],
            }
        )

    async def cancel(request: Request) -> Response:
        sid = request.path_params["sid"]
        if sid not in hub.live:
            return _error(404, "not_found", "no open session")
        return JSONResponse({"cancelled": await hub.cancel(sid)})

    async def turn(request: Request) -> Response:
        sid = request.path_params["sid"]
        agent = hub.live.get(sid)
        if agent is None:
            return _error(404, "not_found", "no open session (POST /api/v1/sessions to open one)")
        try:
            body = TurnRequest.model_validate_json(await request.body())
        except ValidationError as exc:
            return _error(422, "invalid_request", str(exc.errors()[0]["msg"]))
        if hub.busy(sid):
            return _error(409, "busy", "a turn is already running in this session")
        if body.mode is not None:
            agent.loop.set_mode(body.mode)
        queue: asyncio.Queue[LoopEvent] = asyncio.Queue()
        task = asyncio.create_task(agent.run_turn(body.prompt, queue.put_nowait))
        hub.turns[sid] = task
        return StreamingResponse(
            _stream(sid, task, queue),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    async def _stream(
        sid: str, task: asyncio.Task[TurnDone], queue: asyncio.Queue[LoopEvent]
    ) -> AsyncIterator[bytes]:
        yield sse_frame("session", {"session_id": sid})
        try:
            while True:
                getter = asyncio.ensure_future(queue.get())
                await asyncio.wait(
                    {getter, task}, timeout=KEEPALIVE_S, return_when=asyncio.FIRST_COMPLETED
                )
                if not getter.done():
                    getter.cancel()
                    if not task.done():
                        # A long tool call: a comment keeps proxies from closing an idle stream.
                        yield b": keep-alive\n\n"
                        continue
                    if queue.empty():
                        break
                    continue
                event = getter.result()
                yield sse_frame(event.kind, event.model_dump(mode="json"))
                if isinstance(event, TurnDone):
                    return
            # The task ended without a TurnDone frame (it raised): say so.
            exc = None if task.cancelled() else task.exception()
            reason = "cancelled" if exc is None else "error"
            yield sse_frame("done", {"kind": "done", "reason": reason, "error": repr(exc)})
        finally:
            if not task.done():  # the client went away mid-turn
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if hub.mcp is not None:
            hub.mcp.start()
        try:
            yield
        finally:
            await hub.aclose()

    sid = "{sid:str}"
    routes = [
        Route(f"{API}/discovery", discovery, methods=["GET"]),
        Route(f"{API}/sessions", list_sessions, methods=["GET"]),
        Route(f"{API}/sessions", create_session, methods=["POST"]),
        Route(f"{API}/sessions/{sid}", get_session, methods=["GET"]),
        Route(f"{API}/sessions/{sid}", delete_session, methods=["DELETE"]),
        Route(f"{API}/sessions/{sid}/messages", messages, methods=["GET"]),
        Route(f"{API}/sessions/{sid}/turn", turn, methods=["POST"]),
        Route(f"{API}/sessions/{sid}/cancel", cancel, methods=["POST"]),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(_Auth, token=token)], lifespan=lifespan)
    app.state.hub = hub
    return app


def run_server(
    opts: RunOptions,
    settings: Settings,
    *,
    host: str | None = None,
    port: int | None = None,
    token: str | None = None,
) -> None:
    """Serve until interrupted (uvicorn handles SIGINT/SIGTERM and runs the lifespan's close)."""
    import uvicorn

    bearer, where = resolve_token(settings, token, current_environ().file_path)
    bind = host or settings.acp.host
    mcp = None
    if any(s.enabled for s in settings.mcp_servers.values()):
        from openmono.mcp import McpManager

        mcp = McpManager(settings.mcp_servers, log_dir=settings.data_dir / "logs" / "mcp")
    app = create_app(opts, settings, bearer, mcp)
    port = settings.acp.port if port is None else port
    cert: ServerCert | None = None
    if settings.acp.tls == "on":
        cert = ensure_cert(settings.data_dir, bind)
    elif beyond_loopback(bind):
        if settings.insecure_http:
            log.warning(
                "no TLS on %s (--insecure-http): the token and prompts cross in clear", bind
            )
        else:
            # the token and every prompt would otherwise cross the network in clear
            cert = ensure_cert(settings.data_dir, bind)
        log.warning("listening on %s: reachable from other machines (bearer required)", bind)
    if cert is not None:
        log.info(
            "TLS: self-signed certificate %s (SHA-256 %s); clients trust that file as their CA",
            cert.cert,
            cert.sha256,
        )
    scheme = "https" if cert else "http"
    log.info("ACP over HTTP on %s://%s:%s%s (bearer: %s)", scheme, bind, port, API, where)
    config = uvicorn.Config(
        app,
        host=bind,
        port=port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=5,
        ssl_certfile=str(cert.cert) if cert else None,
        ssl_keyfile=str(cert.key) if cert else None,
    )
    uvicorn.Server(config).run()
