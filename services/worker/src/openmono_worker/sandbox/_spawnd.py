"""The spawn server: a small process that forks the tool commands of one process, confined.

Why a server: a confinement must be entered in the child between fork and exec (Landlock
restricts the calling thread, `PR_SET_CHILD_SUBREAPER` the calling process). Doing that in the
tool's own process means `preexec_fn`, so a real `fork()` of that process instead of `vfork()`:
measured here, 5 ms of CPU at 50 MB of memory and 20+ ms at 200 MB (the agent runs tools
in-process), per command. A wrapper program that enters the sandbox and then execs costs a
Python start per command (~11 ms). This server is small (the standard library and this folder's
`_syscalls`), started once per tool process (`_spawner`), and forks cheaply.

Protocol (a SOCK_SEQPACKET socket, fd given as argv[1]): a request is one JSON message with its
fds (`socket.send_fds`): `argv`, `env`, `cwd`, `stdout` (index of the fd the command writes to;
stderr goes there too), `keep` (indices of fds the command keeps, same number), `fd_args` (argv
index -> fd index: that argument becomes the fd's number here), `spec` (`Confinement.spec()`)
and `ruleset` (index of the Landlock ruleset fd, or null). The answer is `{"pid": N}` or
`{"error": "..."}`. The server ends when the socket's other end closes. Its children (the
commands' outer shells) are reaped as they end.

`enter(spec, ruleset_fd)` is the child's side (also used by the background keeper).

Standard library only, run as `python -I -S _spawnd.py FD`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from typing import Any

if __package__:
    from openmono_worker.sandbox import _syscalls as sc
else:  # run by path: this folder is not on sys.path under -I
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _syscalls as sc  # type: ignore[import-not-found, no-redef]

MAX_MESSAGE = 4 * 1024 * 1024
MAX_FDS = 8


def preparer(spec: dict[str, Any], ruleset_fd: int | None) -> Callable[[], None]:
    """The child's side of `spec`, with everything it needs built now (before the fork)."""
    rlimits = [(int(r), (int(s), int(h))) for r, s, h in spec.get("rlimits", ())]
    subreaper = bool(spec.get("subreaper"))
    sandbox = spec.get("sandbox")
    prog = None
    caps: range = range(0)
    if sandbox is not None:
        if ruleset_fd is None:
            raise ValueError("a sandboxed spawn needs its ruleset fd")
        code = bytes.fromhex(str(sandbox.get("seccomp", "")))
        prog = sc.seccomp_program(code) if code else None
        caps = range(int(sandbox.get("last_cap", 63)) + 1)
    root = os.geteuid() == 0

    def enter() -> None:
        for res, pair in rlimits:
            resource.setrlimit(res, pair)
        if subreaper:
            sc.prctl(sc.PR_SET_CHILD_SUBREAPER, 1)
        if sandbox is None or ruleset_fd is None:
            return
        sc.prctl(sc.PR_SET_NO_NEW_PRIVS, 1)
        for cap in caps:
            try:
                sc.prctl(sc.PR_CAPBSET_DROP, cap)
            except OSError as exc:
                # EINVAL: a capability this kernel lacks; EPERM: no CAP_SETPCAP, which (not
                # being root) means no capability to lose.
                if exc.errno == errno.EINVAL or (exc.errno == errno.EPERM and not root):
                    continue
                raise
        if prog is not None:
            sc.install_seccomp(prog[1])
        sc.restrict_self(ruleset_fd)

    return enter


def _reap(_signum: int, _frame: object) -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def spawn(req: dict[str, Any], fds: list[int]) -> int:
    """Start one command as asked (see the module docstring); its pid."""
    argv = [str(a) for a in req["argv"]]
    for index, fd_index in dict(req.get("fd_args", {})).items():
        argv[int(index)] = str(fds[int(fd_index)])
    ruleset = req.get("ruleset")
    enter = preparer(dict(req.get("spec", {})), None if ruleset is None else fds[int(ruleset)])
    stdout = fds[int(req["stdout"])]
    proc = subprocess.Popen(
        argv,
        cwd=str(req["cwd"]),
        env={str(k): str(v) for k, v in dict(req["env"]).items()},
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        pass_fds=tuple(fds[int(i)] for i in req.get("keep", ())),
        preexec_fn=enter,  # this process is single-threaded
    )
    proc.returncode = 0  # reaped by _reap, not by this object
    return proc.pid


def serve(sock: socket.socket) -> None:
    signal.signal(signal.SIGCHLD, _reap)
    while True:
        try:
            msg, fds, _flags, _addr = socket.recv_fds(sock, MAX_MESSAGE, MAX_FDS)
        except (ConnectionResetError, OSError):
            return
        if not msg:
            return
        try:
            answer: dict[str, Any] = {"pid": spawn(json.loads(msg), fds)}
        except Exception as exc:  # every failure is an answer, never the server's end
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
        try:
            sock.send(json.dumps(answer).encode())
        except OSError:
            return


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].isdigit():
        print("usage: _spawnd.py FD", file=sys.stderr)
        return 2
    serve(socket.socket(fileno=int(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
