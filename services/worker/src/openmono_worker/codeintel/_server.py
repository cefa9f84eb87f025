"""One language server process for one workspace and language: start, sync files, ask, restart.

The server runs in its own process group (so it dies whole) with a parent-death signal (so it
dies with the worker or agent process, even on SIGKILL), started from a long-lived thread because
the kernel sends that signal when the *thread* that forked it ends. Every request has a deadline.
A server found dead is started again on the next use, its open documents forgotten (they are
synced again from disk); more than a few crashes in a minute and it is given up on for a while.

Documents are synced with full-text changes: files are small and tools rewrite them whole anyway.
Diagnostics are pulled (`textDocument/diagnostic`, LSP 3.17: the answer is about the server's
current view, changes on disk included) where the server answers that; otherwise the pushed
`publishDiagnostics` are kept per document with the version they describe, so a caller can wait
for the diagnostics of exactly the text it synced.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from lsprotocol.converters import get_converter

from openmono_worker.codeintel._errors import RequestTimedOut, ServerFailed
from openmono_worker.codeintel._jsonrpc import Connection
from openmono_worker.codeintel._languages import Language, language_id_for
from openmono_worker.codeintel._watch import Snapshot

log = logging.getLogger(__name__)

CONVERTER = get_converter()
INIT_TIMEOUT_S = 30.0
_STOP_GRACE_S = 2.0
_CRASH_WINDOW_S = 60.0
_MAX_CRASHES = 4
_PR_SET_PDEATHSIG = 1
_METHOD_NOT_FOUND = -32601
# Pyright logs this when it has enumerated the workspace; before that, references are partial.
_PROJECT_LOADED = re.compile(r"Found \d+ source files?|No source files found")
# Requests whose answer spans the workspace, so they wait for the project to be loaded.
_WORKSPACE_WIDE = frozenset({"textDocument/references", "workspace/symbol"})

# One long-lived thread forks every server: see the module docstring (parent-death signal).
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lsp-spawn")


def _find_prctl() -> Any:
    with contextlib.suppress(OSError, AttributeError):
        return ctypes.CDLL(None, use_errno=True).prctl
    return None


# Looked up here, not in the child: between fork and exec only async-signal-safe work is wise.
_PRCTL = _find_prctl() if sys.platform == "linux" else None


def _die_with_parent() -> None:  # runs in the child between fork and exec
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _spawn(argv: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_die_with_parent if _PRCTL is not None else None,
    )


@dataclass
class _Doc:
    version: int
    text: str


@dataclass(frozen=True)
class Diagnostics:
    """What the server last published for a document, and for which version of it."""

    version: int
    items: tuple[lsp.Diagnostic, ...]


def _section(settings: dict[str, Any], section: str | None) -> Any:
    node: Any = settings
    for part in (section or "").split("."):
        if not part:
            continue
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


class LanguageServer:
    """A (re)startable server for `workspace` and `language`; safe to use from several threads."""

    def __init__(self, workspace: Path, language: Language, executable: str) -> None:
        self.workspace = workspace
        self.language = language
        self.executable = executable
        self.starts = 0
        self._lock = threading.RLock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._docs: dict[str, _Doc] = {}
        self._diags: dict[str, Diagnostics] = {}
        self._diag_cond = threading.Condition()
        self._crashes: deque[float] = deque(maxlen=_MAX_CRASHES)
        self._stderr: deque[str] = deque(maxlen=50)
        self.capabilities: lsp.ServerCapabilities | None = None
        self.project_loaded = threading.Event()
        self._snapshot: Snapshot | None = None
        self._pull: bool | None = None  # does it answer textDocument/diagnostic? (None: untried)
        self.last_used = time.monotonic()

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def alive(self) -> bool:
        proc, conn = self._proc, self._conn
        return (
            proc is not None
            and proc.poll() is None
            and conn is not None
            and not conn.closed.is_set()
        )

    def ensure_started(self) -> Connection:
        """The live connection, starting (or restarting) the server first if needed."""
        with self._lock:
            self.last_used = time.monotonic()
            if self.alive() and self._conn is not None:
                return self._conn
            if self._proc is not None:  # it was running: a crash (or a kill from outside)
                log.warning(
                    "%s language server (pid %s) died; restarting", self.language.id, self.pid
                )
                now = time.monotonic()
                self._crashes.append(now)
                if len(self._crashes) == _MAX_CRASHES and now - self._crashes[0] < _CRASH_WINDOW_S:
                    self._kill()
                    self._proc = None
                    raise ServerFailed(
                        f"the {self.language.id} language server crashed {_MAX_CRASHES} times in "
                        f"{_CRASH_WINDOW_S:g} s; not restarting it yet{self._stderr_tail()}"
                    )
                self._kill()
            return self._start()

    def _start(self) -> Connection:
        argv = [self.executable, *self.language.command[1:]]
        try:
            proc = _SPAWNER.submit(_spawn, argv, self.workspace).result()
        except OSError as exc:
            raise ServerFailed(f"cannot start {argv[0]}: {exc.strerror or exc}") from exc
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._proc = proc
        self.project_loaded.clear()
        self._docs.clear()
        with self._diag_cond:
            self._diags.clear()
        threading.Thread(target=self._drain_stderr, args=(proc,), daemon=True).start()
        conn = Connection(proc.stdout, proc.stdin, self._on_notify, self._on_request)
        self._conn = conn
        self.starts += 1
        try:
            reply = conn.request("initialize", self._initialize_params(), INIT_TIMEOUT_S)
        except (ServerFailed, RequestTimedOut) as exc:
            self._kill()
            raise ServerFailed(f"{argv[0]} did not initialize: {exc}{self._stderr_tail()}") from exc
        if "error" in reply:
            self._kill()
            raise ServerFailed(f"{argv[0]} refused to initialize: {reply['error'].get('message')}")
        result = CONVERTER.structure(reply, lsp.InitializeResponse).result
        self.capabilities = result.capabilities if result is not None else None
        if self.language.id != "python":
            self.project_loaded.set()  # only pyright tells us; others answer as they can
        conn.notify("initialized", {})
        conn.notify("workspace/didChangeConfiguration", {"settings": self._settings()})
        self._snapshot = Snapshot(self.workspace, self.language.extensions)
        return conn

    def _initialize_params(self) -> Any:
        caps = lsp.ClientCapabilities(
            workspace=lsp.WorkspaceClientCapabilities(configuration=True, workspace_folders=True),
            text_document=lsp.TextDocumentClientCapabilities(
                synchronization=lsp.TextDocumentSyncClientCapabilities(),
                hover=lsp.HoverClientCapabilities(
                    content_format=[lsp.MarkupKind.PlainText, lsp.MarkupKind.Markdown]
                ),
                definition=lsp.DefinitionClientCapabilities(link_support=False),
                references=lsp.ReferenceClientCapabilities(),
                document_symbol=lsp.DocumentSymbolClientCapabilities(
                    hierarchical_document_symbol_support=True
                ),
                publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(version_support=True),
            ),
        )
        uri = self.workspace.as_uri()
        params = lsp.InitializeParams(
            process_id=os.getpid(),
            root_uri=uri,
            capabilities=caps,
            workspace_folders=[lsp.WorkspaceFolder(uri=uri, name=self.workspace.name)],
            client_info=lsp.ClientInfo(name="openmono"),
        )
        return CONVERTER.unstructure(params)

    def _drain_stderr(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stderr is not None
        with contextlib.suppress(OSError, ValueError):
            for line in proc.stderr:
                self._stderr.append(line.decode("utf-8", "replace").rstrip())

    def _stderr_tail(self) -> str:
        lines = [line.strip() for line in self._stderr if line.strip()]
        errors = [line for line in lines if "error" in line.lower()][:2]
        shown = errors or lines[-3:]  # the error itself beats the end of a backtrace
        return ("; its stderr says: " + " | ".join(shown)) if shown else ""

    def _kill(self) -> None:
        proc = self._proc
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=_STOP_GRACE_S)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            with contextlib.suppress(OSError, ValueError):
                if stream is not None:
                    stream.close()

    def stop(self) -> None:
        """Ask the server to shut down, briefly; then kill its process group in any case."""
        with self._lock:
            conn = self._conn
            if conn is not None and self.alive():
                with contextlib.suppress(ServerFailed, RequestTimedOut):
                    conn.request("shutdown", None, _STOP_GRACE_S)
                    conn.notify("exit", None)
            self._kill()
            self._proc = None
            self._conn = None
            self._docs.clear()

    # -- what the server asks and tells us --------------------------------------------------

    def _settings(self) -> dict[str, Any]:
        settings = dict(self.language.settings)
        if self.language.id == "python":
            venv = self.workspace / ".venv" / "bin" / "python"
            python = dict(settings.get("python", {}))
            python["pythonPath"] = str(venv) if venv.is_file() else sys.executable
            settings["python"] = python
        return settings

    def _on_request(self, method: str, params: Any) -> Any:
        if method == "workspace/configuration":
            items = params.get("items", []) if isinstance(params, dict) else []
            settings = self._settings()
            return [_section(settings, item.get("section")) for item in items]
        if method == "workspace/workspaceFolders":
            return [{"uri": self.workspace.as_uri(), "name": self.workspace.name}]
        return None  # registerCapability, workDoneProgress/create, showMessageRequest, ...

    def _on_notify(self, method: str, params: Any) -> None:
        if method == lsp.WINDOW_LOG_MESSAGE and isinstance(params, dict):
            if _PROJECT_LOADED.search(str(params.get("message", ""))):
                self.project_loaded.set()
            return
        if method != lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
            return
        published = CONVERTER.structure(params, lsp.PublishDiagnosticsParams)
        doc = self._docs.get(published.uri)
        version = (
            published.version if published.version is not None else (doc.version if doc else 0)
        )
        with self._diag_cond:
            self._diags[published.uri] = Diagnostics(version, tuple(published.diagnostics))
            self._diag_cond.notify_all()

    # -- documents ---------------------------------------------------------------------------

    def sync(self, path: Path, text: str) -> int:
        """Make the server see `text` as the content of `path`; returns the document version."""
        conn = self.ensure_started()
        uri = path.as_uri()
        with self._lock:
            doc = self._docs.get(uri)
            if doc is not None and doc.text == text:
                return doc.version
            if doc is None:
                doc = _Doc(1, text)
                self._docs[uri] = doc
                item = lsp.TextDocumentItem(
                    uri=uri,
                    language_id=language_id_for(path, self.language),
                    version=1,
                    text=text,
                )
                params: Any = lsp.DidOpenTextDocumentParams(text_document=item)
                conn.notify("textDocument/didOpen", CONVERTER.unstructure(params))
                return 1
            doc.version += 1
            doc.text = text
            params = lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
            conn.notify("textDocument/didChange", CONVERTER.unstructure(params))
            return doc.version

    def sync_from_disk(self, path: Path) -> int:
        """Sync `path` from disk, after telling the server what else changed on disk."""
        self.notice_changes()
        return self.sync(path, path.read_text(encoding="utf-8", errors="replace"))

    def notice_changes(self) -> int:
        """Report files changed behind our back (see `_watch.py`); returns how many."""
        conn = self.ensure_started()
        with self._lock:
            changes = self._snapshot.changes() if self._snapshot is not None else []
            if not changes:
                return 0
            events = [lsp.FileEvent(uri=p.as_uri(), type=kind) for p, kind in changes]
            params = lsp.DidChangeWatchedFilesParams(changes=events)
            conn.notify("workspace/didChangeWatchedFiles", CONVERTER.unstructure(params))
            for path, kind in changes:
                uri = path.as_uri()
                if uri not in self._docs:
                    continue
                if kind == lsp.FileChangeType.Deleted:
                    del self._docs[uri]
                    close = lsp.DidCloseTextDocumentParams(
                        text_document=lsp.TextDocumentIdentifier(uri=uri)
                    )
                    conn.notify("textDocument/didClose", CONVERTER.unstructure(close))
                else:
                    self.sync(path, path.read_text(encoding="utf-8", errors="replace"))
            return len(changes)

    def synced_text(self, path: Path) -> str | None:
        doc = self._docs.get(path.as_uri())
        return doc.text if doc is not None else None

    def diagnostics(self, path: Path, version: int, timeout_s: float) -> Diagnostics | None:
        """The diagnostics of `version` of `path` (or a later one), waiting up to `timeout_s`."""
        if self._pull is not False:
            pulled = self._pull_diagnostics(path, version, timeout_s)
            if self._pull:
                return pulled
        uri = path.as_uri()
        deadline = time.monotonic() + timeout_s
        with self._diag_cond:
            while True:
                found = self._diags.get(uri)
                if found is not None and found.version >= version:
                    return found
                left = deadline - time.monotonic()
                if left <= 0 or not self.alive():
                    return None
                self._diag_cond.wait(min(left, 0.5))

    def _pull_diagnostics(self, path: Path, version: int, timeout_s: float) -> Diagnostics | None:
        conn = self.ensure_started()
        params = {"textDocument": {"uri": path.as_uri()}}
        try:
            reply = conn.request("textDocument/diagnostic", params, timeout_s)
        except RequestTimedOut:
            return None
        result = reply.get("result")
        error = reply.get("error")
        if isinstance(error, dict) and error.get("code") != _METHOD_NOT_FOUND:
            return None  # a failure of this request, not a missing feature
        if error is not None or not isinstance(result, dict) or result.get("kind") != "full":
            self._pull = False  # not supported (or not as we ask it): wait for pushes instead
            return None
        self._pull = True
        items = [CONVERTER.structure(item, lsp.Diagnostic) for item in result.get("items", [])]
        return Diagnostics(version, tuple(items))

    # -- requests ----------------------------------------------------------------------------

    def request(self, method: str, params: Any, timeout_s: float) -> Any:
        """Send an LSP request (params: an lsprotocol object) and return the typed result."""
        conn = self.ensure_started()
        self.last_used = time.monotonic()
        deadline = time.monotonic() + timeout_s
        if method in _WORKSPACE_WIDE:
            self.project_loaded.wait(timeout_s)
        left = max(0.5, deadline - time.monotonic())
        reply = conn.request(method, CONVERTER.unstructure(params), left)
        if "error" in reply:
            error = reply["error"]
            raise ServerFailed(f"{method} failed: {error.get('message', error)}")
        response_type: Any = lsp.METHOD_TO_TYPES[method][1]
        return CONVERTER.structure(reply, response_type).result
