"""The warm servers: one per (workspace, language), started on first use, stopped when idle,
when the executor closes (`stop_servers`) and when the process exits.

Kept per process: in-process that is the agent (the session), in Celery a pool process; either
way the servers run where the workspace is, which is where the tool runs.
"""

from __future__ import annotations

import atexit
import threading
import time
from pathlib import Path

from openmono_worker.codeintel._languages import require_language
from openmono_worker.codeintel._server import LanguageServer
from openmono_worker.settings import codeintel_settings

_lock = threading.Lock()
_servers: dict[tuple[Path, str], LanguageServer] = {}
_reaper: threading.Thread | None = None


def server_for(
    workspace: Path, path: Path, shown: str, *, trusted: bool, data_dir: Path | None = None
) -> LanguageServer:
    """The (possibly not yet started) server for `path`'s language; `NoServer` if none here,
    `NeedsTrust` if it would run the code of `workspace` and the user has not `trusted` it.
    `data_dir`: where the user's installed servers are (default: the worker's)."""
    lang, exe = require_language(path, shown, workspace, trusted=trusted, data_dir=data_dir)
    key = (workspace, lang.id)
    evicted: list[LanguageServer] = []
    with _lock:
        server = _servers.get(key)
        if server is None:
            server = LanguageServer(workspace, lang, exe)
            limit = codeintel_settings().max_servers
            while len(_servers) >= limit:
                oldest = min(_servers, key=lambda k: _servers[k].last_used)
                evicted.append(_servers.pop(oldest))
            _servers[key] = server
            _start_reaper()
    for old in evicted:
        old.stop()
    return server


def running_servers() -> list[LanguageServer]:
    with _lock:
        return [s for s in _servers.values() if s.alive()]


def stop_servers(workspace: Path | None = None) -> int:
    """Stop every server (or those of one workspace); returns how many were running."""
    with _lock:
        keys = [k for k in _servers if workspace is None or k[0] == workspace]
        victims = [_servers.pop(k) for k in keys]
    running = sum(1 for s in victims if s.alive())
    for server in victims:
        server.stop()
    return running


def _reap_idle() -> None:
    while True:
        idle_s = codeintel_settings().idle_stop_s
        time.sleep(min(60.0, idle_s / 2))
        now = time.monotonic()
        with _lock:
            idle = [k for k, s in _servers.items() if now - s.last_used > idle_s]
            victims = [_servers.pop(k) for k in idle]
        for server in victims:
            server.stop()


def _start_reaper() -> None:
    global _reaper
    if _reaper is None:
        _reaper = threading.Thread(target=_reap_idle, name="lsp-reaper", daemon=True)
        _reaper.start()


atexit.register(stop_servers)
