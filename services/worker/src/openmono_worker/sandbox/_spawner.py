"""The client of the spawn server (`_spawnd`): one server per process, started on first use.

`spawn()` sends one request and waits for the pid; a lock keeps the threads of this process
(the agent runs tool calls in a pool) to one request at a time, which takes well under a
millisecond. A server that died (killed, or this process forked: a Celery pool process) is
started again on the next spawn. Closing this process's end of the socket ends the server.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from openmono_worker.sandbox import _spawnd
from openmono_worker.sandbox._confine import Confinement

SERVER = Path(_spawnd.__file__)
_ANSWER_BYTES = 65536


class SpawnFailed(OSError):
    """The command could not be started as asked (the server's reason in the message)."""


class _Server:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(SERVER), str(theirs.fileno())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,  # a Ctrl-C at the agent's terminal is not for it
            )
        finally:
            theirs.close()
        self.sock = ours
        self.pid = os.getpid()

    def close(self) -> None:
        self.sock.close()
        try:
            self.proc.wait(2.0)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_lock = threading.Lock()
_server: list[_Server] = []


def _current() -> _Server:
    if _server and (_server[0].pid != os.getpid() or _server[0].proc.poll() is not None):
        stale = _server.pop()
        if stale.pid == os.getpid():
            stale.sock.close()
    if not _server:
        _server.append(_Server())
    return _server[0]


def spawn(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdout: int,
    keep: Sequence[int] = (),
    fd_args: Mapping[int, int] | None = None,
    confinement: Confinement,
) -> int:
    """Start `argv` confined, in a session of its own, stdout and stderr on `stdout`; its pid.

    `keep`: fds the command keeps open (numbers may differ in it); `fd_args`: argv index -> index
    in `keep` of the fd whose number (in the command) that argument becomes."""
    fds = [stdout, *keep]
    ruleset = None
    if confinement.ruleset_fd is not None:
        ruleset = len(fds)
        fds.append(confinement.ruleset_fd)
    request = {
        "argv": list(argv),
        "cwd": str(cwd),
        "env": dict(env),
        "stdout": 0,
        "keep": list(range(1, 1 + len(keep))),
        "fd_args": {str(i): 1 + k for i, k in (fd_args or {}).items()},
        "spec": confinement.spec(),
        "ruleset": ruleset,
    }
    data = json.dumps(request).encode()
    with _lock:
        try:
            server = _current()
            socket.send_fds(server.sock, [data], fds)
        except OSError:
            # It died since the last call (nothing was started): start another one, once.
            _server.clear()
            server = _current()
            socket.send_fds(server.sock, [data], fds)
        try:
            answer = server.sock.recv(_ANSWER_BYTES)
        except OSError:
            answer = b""
        if not answer:
            _server.clear()
            raise SpawnFailed("the spawn server ended before it answered")
    reply = json.loads(answer)
    if "pid" not in reply:
        raise SpawnFailed(str(reply.get("error", "unknown error")))
    return int(reply["pid"])


def stop() -> None:
    """End this process's spawn server (tests; it also ends with this process)."""
    with _lock:
        if _server and _server[0].pid == os.getpid():
            _server.pop().close()
        _server.clear()
