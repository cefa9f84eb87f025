"""A real ACP client for tests (the `agent-client-protocol` SDK's client) around `openmono acp`.

    async with acp_agent(env, cwd) as (conn, client):
        await conn.initialize(protocol_version=1, client_capabilities=...)
        ...
`client` records every `session/update` and answers `session/request_permission` with
`client.answer` (an option id, or None to cancel the request). With `files` set it also serves
`fs/read_text_file` from that dict (path → text) and records `fs/write_text_file` calls. The agent
runs in its own process group (killed at the end); its stderr goes to `stderr_log`.
`agent_env(tmp_path, llm_url, key)` is an agent environment cut off from ours, pointed at a model.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from acp import RequestError, connect_to_agent
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

from tests.support.clean_env import clean_environ


class RecordingClient:
    """The client side: records updates and permission requests, answers as told."""

    def __init__(self, answer: str | None = "allow_once") -> None:
        self.answer = answer
        self.updates: list[tuple[str, Any]] = []
        self.permissions: list[Any] = []
        self.files: dict[str, str] | None = None
        self.writes: list[tuple[str, str]] = []
        self.reads: list[str] = []
        self.on_update: Callable[[Any], None] | None = None

    async def request_permission(
        self, options: list[Any], session_id: str, tool_call: Any, **_: Any
    ) -> RequestPermissionResponse:
        self.permissions.append(tool_call)
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answer)
        )

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((session_id, update))
        if self.on_update is not None:
            self.on_update(update)

    async def read_text_file(
        self,
        path: str,
        session_id: str,
        limit: int | None = None,
        line: int | None = None,
        **_: Any,
    ) -> ReadTextFileResponse:
        self.reads.append(path)
        if self.files is None or path not in self.files:
            raise RequestError.resource_not_found(path)
        lines = self.files[path].splitlines(keepends=True)
        start = (line or 1) - 1
        chosen = lines[start : start + limit] if limit else lines[start:]
        return ReadTextFileResponse(content="".join(chosen))

    async def write_text_file(
        self, content: str, path: str, session_id: str, **_: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        return WriteTextFileResponse()

    def kinds(self) -> list[str]:
        return [u.session_update for _, u in self.updates]

    def of_kind(self, kind: str) -> list[Any]:
        return [u for _, u in self.updates if u.session_update == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of_kind(kind))


@contextlib.asynccontextmanager
async def acp_agent(
    env: dict[str, str],
    cwd: Path,
    stderr_log: Path,
    client: RecordingClient | None = None,
    extra_args: tuple[str, ...] = (),
) -> AsyncIterator[tuple[ClientSideConnection, RecordingClient]]:
    """Start `openmono acp` (this venv's Python) and connect a recording client to it."""
    client = client or RecordingClient()
    with stderr_log.open("ab") as err:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "openmono.cli", *extra_args, "acp",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=err,
            cwd=cwd, env={**os.environ, **env}, start_new_session=True,
            limit=50 * 1024 * 1024,
        )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    conn = connect_to_agent(client, proc.stdin, proc.stdout)  # type: ignore[arg-type]
    try:
        yield conn, client
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(conn.close(), 5)
        with contextlib.suppress(Exception):
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 5)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()


def agent_env(tmp_path: Path, llm_url: str, key: str) -> dict[str, str]:
    """`openmono acp`'s environment: none of our OPENMONO_* settings, its own HOME and data dir
    under `tmp_path`, the model at `llm_url` with `key` and a 32k context."""
    return {
        **clean_environ(),
        "OPENMONO_DATA_DIR": str(tmp_path / "data"),
        "OPENMONO_LLM_ENDPOINT": llm_url,
        "OPENMONO_LLM_API_KEY": key,
        "OPENMONO_LLM_CONTEXT_WINDOW": "32768",
        "HOME": str(tmp_path / "home"),
    }
