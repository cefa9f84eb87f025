"""JSON-RPC 2.0 over a child's stdio with LSP framing (`Content-Length` headers), thread-based.

Tools run synchronously in a worker thread, so the connection is synchronous too: a reader thread
parses frames and hands responses to the waiting caller (each request waits on its own event, with
a deadline), notifications to a callback, and answers requests from the server itself (the
`workspace/configuration` kind) through a responder callback. The message shapes come from
`lsprotocol` (see `_server.py`); this module only moves dicts.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Callable
from typing import IO, Any

from openmono_worker.codeintel._errors import RequestTimedOut, ServerFailed

log = logging.getLogger(__name__)

Notify = Callable[[str, Any], None]
Respond = Callable[[str, Any], Any]

_MAX_FRAME_BYTES = 64 * 1024 * 1024


class _Pending:
    __slots__ = ("done", "message")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.message: dict[str, Any] | None = None


class Connection:
    """One JSON-RPC peer on a pair of byte streams; `closed` is set when the reader stops."""

    def __init__(
        self, reader: IO[bytes], writer: IO[bytes], on_notify: Notify, on_request: Respond
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._on_notify = on_notify
        self._on_request = on_request
        self._lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._next_id = 0
        self.closed = threading.Event()
        self._thread = threading.Thread(target=self._read_loop, name="lsp-reader", daemon=True)
        self._thread.start()

    # -- sending ----------------------------------------------------------------------------

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, separators=(",", ":")).encode()
        frame = b"Content-Length: %d\r\n\r\n" % len(body) + body
        with self._lock:
            if self.closed.is_set():
                raise ServerFailed("the language server has exited")
            try:
                self._writer.write(frame)
                self._writer.flush()
            except (OSError, ValueError) as exc:
                raise ServerFailed(f"cannot write to the language server: {exc}") from exc

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any, timeout_s: float) -> dict[str, Any]:
        """Send a request and wait for its whole response message (`result` or `error`)."""
        pending = _Pending()
        with self._lock:
            self._next_id += 1
            rid = self._next_id
            self._pending[rid] = pending
        try:
            self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
            if not pending.done.wait(timeout_s):
                with contextlib.suppress(ServerFailed):
                    self.notify("$/cancelRequest", {"id": rid})
                raise RequestTimedOut(
                    f"{method}: no answer from the language server in {timeout_s:g} s"
                )
        finally:
            with self._lock:
                self._pending.pop(rid, None)
        if pending.message is None:
            raise ServerFailed(f"{method}: the language server exited before answering")
        return pending.message

    # -- receiving --------------------------------------------------------------------------

    def _read_frame(self) -> dict[str, Any] | None:
        length = None
        while True:
            line = self._reader.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                break
            name, _, value = line.decode("ascii", "replace").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if length is None or length > _MAX_FRAME_BYTES:
            raise ValueError(f"bad frame header (content-length {length})")
        body = self._reader.read(length)
        if len(body) < length:
            return None
        message = json.loads(body)
        if not isinstance(message, dict):
            raise ValueError("a frame that is not a JSON object")
        return message

    def _read_loop(self) -> None:
        try:
            while True:
                message = self._read_frame()
                if message is None:
                    break
                self._dispatch(message)
        except (OSError, ValueError) as exc:
            log.warning("language server stream broke: %s", exc)
        finally:
            self.closed.set()
            with self._lock:
                waiting = list(self._pending.values())
            for pending in waiting:
                pending.done.set()  # message stays None: "exited before answering"

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            rid = message.get("id")
            with self._lock:
                pending = self._pending.get(rid) if isinstance(rid, int) else None
            if pending is not None:
                pending.message = message
                pending.done.set()
            return
        if "id" not in message:
            try:
                self._on_notify(method, message.get("params"))
            except Exception:  # a bad notification must not stop the reader
                log.exception("handling %s failed", method)
            return
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            reply["result"] = self._on_request(method, message.get("params"))
        except Exception as exc:
            reply["error"] = {"code": -32603, "message": str(exc)}
        with contextlib.suppress(ServerFailed):
            self._send(reply)
