"""The seccomp filter of the sandbox: no new sockets to the outside, no io_uring.

Landlock (ABI 4+) refuses TCP bind and connect, but not UDP, not pathname or abstract unix
sockets (a Docker socket, an ssh-agent), and io_uring can open sockets without the socket(2)
syscall. This filter answers `socket(AF_UNIX | AF_INET | AF_INET6, ...)` and `io_uring_setup`
with EACCES; `socketpair` (pipes between a process's own children) still works. Other
architectures' system calls (a 32-bit program on x86_64, x32) are refused outright, since their
numbers differ and the filter could not tell what they do.

Supported: x86_64 and aarch64; elsewhere `program()` is None and the sandbox is unavailable.
"""

from __future__ import annotations

import errno
import platform
import socket
import struct

_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_X32_BIT = 0x40000000
# offsets in struct seccomp_data: nr, arch, then args[0] (its low 32 bits: little endian)
_NR, _ARCH, _ARG0 = 0, 4, 16

# machine -> (AUDIT_ARCH, __NR_socket, __NR_io_uring_setup)
_ARCHES = {
    "x86_64": (0xC000003E, 41, 425),
    "aarch64": (0xC00000B7, 198, 425),
}
REFUSED_FAMILIES = (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6)


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def supported() -> bool:
    return platform.machine() in _ARCHES


def program() -> bytes | None:
    """The filter as BPF instructions for this machine; None where it is not supported."""
    arch = _ARCHES.get(platform.machine())
    if arch is None:
        return None
    audit_arch, nr_socket, nr_uring = arch
    deny = _RET_ERRNO | errno.EACCES
    ops = [
        _op(_LD_W_ABS, _ARCH),
        _op(_JEQ_K, audit_arch, 1, 0),  # this architecture: go on; another one: refuse
        _op(_RET_K, deny),
        _op(_LD_W_ABS, _NR),
        _op(_JGE_K, _X32_BIT, 0, 1),  # x32 numbers
        _op(_RET_K, deny),
        _op(_JEQ_K, nr_uring, 0, 1),
        _op(_RET_K, deny),
        _op(_JEQ_K, nr_socket, 1, 0),
        _op(_RET_K, _RET_ALLOW),
        _op(_LD_W_ABS, _ARG0),
    ]
    for family in REFUSED_FAMILIES:
        ops.append(_op(_JEQ_K, int(family), 0, 1))
        ops.append(_op(_RET_K, deny))
    ops.append(_op(_RET_K, _RET_ALLOW))
    return b"".join(ops)
