"""The kernel calls a confinement is made of, over ctypes (Linux; standard library only).

Why our own few lines instead of the `landlock` wheel: only pre-releases of it exist, and what we
need is three Landlock syscalls and `prctl`. More to the point, the part that runs in the child
between fork and exec (`_spawnd.enter`) must do nothing but system calls: no imports, no file
opens, no objects built by a library we do not control. What can be prepared beforehand (the
ruleset, the seccomp program) is built before the fork.

This module imports nothing of the package: the spawn server and the background keeper load it
with `python -I -S` from this folder.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import struct

_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long
_prctl = _libc.prctl
_prctl.restype = ctypes.c_int

# Landlock's syscall numbers are the same on every architecture (they came after the unification).
SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
LANDLOCK_RULE_NET_PORT = 2

PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
PR_SET_CHILD_SUBREAPER = 36
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2

# Filesystem access rights, by the ABI that introduced them.
FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

# Rights that make sense on a file (a rule on a file with directory rights is EINVAL).
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV


def fs_rights(abi: int) -> int:
    """Every filesystem right the kernel's Landlock ABI knows (so all of them are handled)."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


class KernelRefused(OSError):
    """A system call of the confinement failed (errno and the call's name in the message)."""


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise KernelRefused(errno, f"{what}: {os.strerror(errno)}")
    return result


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled."""
    try:
        version = int(
            _syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
        )
    except (AttributeError, OSError):
        return 0
    return max(version, 0)


def create_ruleset(handled_fs: int, handled_net: int, scoped: int, abi: int) -> int:
    """A new ruleset fd handling these rights (the attribute struct sized for the ABI)."""
    if abi >= 6:
        attr = struct.pack("=QQQ", handled_fs, handled_net, scoped)
    elif abi >= 4:
        attr = struct.pack("=QQ", handled_fs, handled_net)
    else:
        attr = struct.pack("=Q", handled_fs)
    buf = ctypes.create_string_buffer(attr, len(attr))
    return _check(
        int(_syscall(SYS_LANDLOCK_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), 0)),
        "landlock_create_ruleset",
    )


def add_path_rule(ruleset: int, path: str, access: int) -> None:
    """Allow `access` beneath `path` (for a file, `access` must hold file rights only). A path
    that vanished since it was listed is skipped."""
    if not access:
        return
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        attr = ctypes.create_string_buffer(struct.pack("=Qi", access, fd), 12)
        _check(
            int(_syscall(SYS_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH, attr, 0)),
            f"landlock_add_rule({path})",
        )
    finally:
        os.close(fd)


def restrict_self(ruleset: int) -> None:
    """Enter the ruleset's domain (this thread, and everything it executes or forks after)."""
    _check(int(_syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0)), "landlock_restrict_self")


def prctl(option: int, arg: int = 0) -> None:
    _check(int(_prctl(option, ctypes.c_ulong(arg), 0, 0, 0)), f"prctl({option})")


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


def seccomp_program(code: bytes) -> tuple[ctypes.Array[ctypes.c_char], _SockFprog]:
    """A classic-BPF program ready for `install_seccomp`, built in the parent (keep both alive)."""
    buf = ctypes.create_string_buffer(code, len(code))
    return buf, _SockFprog(len(code) // 8, ctypes.cast(buf, ctypes.c_void_p))


def install_seccomp(prog: _SockFprog) -> None:
    """Install a seccomp filter (needs no_new_privs, or CAP_SYS_ADMIN)."""
    _check(
        int(_prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(prog), 0, 0)),
        "prctl(PR_SET_SECCOMP)",
    )


def machine() -> str:
    return platform.machine()


def close_fd(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)
