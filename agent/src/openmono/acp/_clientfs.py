"""FileRead / FileWrite through the editor (`fs/read_text_file`, `fs/write_text_file`).

When the ACP client says it offers them, reads see the editor's buffers (unsaved changes too) and
writes go through the editor (which may show or track them). Everything else, and any call the
client fails to serve, runs on the inner executor as usual. Paths are checked with the worker's
workspace guard before the client is asked, exactly as the worker would check them, and so is a
blind overwrite (FileWrite of an existing file the session has not read: the worker refuses it).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Protocol

from openmono_contracts import ToolRequest, ToolResult
from openmono_worker import (
    READ_DEFAULT_LIMIT,
    display_path,
    names_path,
    read_page,
    resolve_path,
    write_summary,
)

from openmono.executor import Executor


class FsClient(Protocol):
    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None
    ) -> Any: ...

    async def write_text_file(self, session_id: str, path: str, content: str) -> Any: ...


class ClientFsExecutor:
    """An `Executor` that serves FileRead / FileWrite through the client where it can."""

    def __init__(
        self, inner: Executor, client: FsClient, session_id: str, *, read: bool, write: bool
    ) -> None:
        self.inner = inner
        self.client = client
        self.session_id = session_id
        self.read = read
        self.write = write

    async def run(self, req: ToolRequest) -> ToolResult:
        if req.tool == "FileRead" and self.read:
            result = await self._read(req)
        elif req.tool == "FileWrite" and self.write:
            result = await self._write(req)
        else:
            result = None
        return result if result is not None else await self.inner.run(req)

    async def cancel(self, call_id: str) -> None:
        await self.inner.cancel(call_id)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def _path(self, req: ToolRequest) -> tuple[Path, str] | None:
        workspace = Path(req.workspace)
        try:
            path = resolve_path(workspace, str(req.params["file_path"]))
        except Exception:
            return None  # the worker gives the proper refusal
        return path, display_path(path, workspace)

    async def _read(self, req: ToolRequest) -> ToolResult | None:
        found = self._path(req)
        if found is None:
            return None
        path, shown = found
        started = time.monotonic()
        start = int(req.params.get("offset") or 1)
        limit = int(req.params.get("limit") or READ_DEFAULT_LIMIT)
        try:
            answer = await self.client.read_text_file(
                session_id=self.session_id, path=str(path), line=start, limit=limit
            )
        except Exception:
            return None  # not open, not readable by the editor: read it from disk
        lines = str(getattr(answer, "content", "")).splitlines()
        # The editor gave as many lines as were asked: there may be more.
        body, _ = read_page(lines, start, shown, more=len(lines) >= limit)
        elapsed = (time.monotonic() - started) * 1000
        return ToolResult(call_id=req.call_id, ok=True, output=body, elapsed_ms=elapsed)

    async def _write(self, req: ToolRequest) -> ToolResult | None:
        found = self._path(req)
        if found is None:
            return None
        path, shown = found
        content = str(req.params.get("content", ""))
        started = time.monotonic()
        existed = path.exists()
        known = req.known_files
        if existed and known is not None and not names_path(Path(req.workspace), known, path):
            return None  # a blind overwrite: the worker refuses it with its message
        try:
            await self.client.write_text_file(
                session_id=self.session_id, path=str(path), content=content
            )
        except Exception:
            return None
        output = write_summary(shown, content, existed=existed, via="via the editor")
        elapsed = (time.monotonic() - started) * 1000
        return ToolResult(call_id=req.call_id, ok=True, output=output, elapsed_ms=elapsed)
