"""Run a command where the kernel refuses Landlock, as an old kernel or a strict seccomp profile
does: `python no_landlock.py COMMAND...` installs a seccomp filter answering the three Landlock
system calls with ENOSYS, then execs COMMAND (the filter stays across exec).

Used to start a real worker, or a real in-process tool run, that cannot sandbox.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
import sys

_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_LANDLOCK = (444, 445, 446)


class _Fprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def refuse_landlock() -> None:
    ops = [_op(0x20, 4), _op(0x15, _AUDIT_ARCH[platform.machine()], 1, 0), _op(0x06, 0x7FFF0000)]
    ops.append(_op(0x20, 0))
    for nr in _LANDLOCK:
        ops += [_op(0x15, nr, 0, 1), _op(0x06, 0x00050000 | errno.ENOSYS)]
    ops.append(_op(0x06, 0x7FFF0000))
    code = b"".join(ops)
    buf = ctypes.create_string_buffer(code, len(code))
    prog = _Fprog(len(ops), ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp")


if __name__ == "__main__":
    refuse_landlock()
    os.execvp(sys.argv[1], sys.argv[1:])
