"""The end of a chunked HTTP/1.1 body, found in the bytes as they pass (RFC 9112 §7.1).

The token tap relays a streamed response byte for byte. Parsing every event with h11 and writing
it again was most of the tap's work per request; this reads only the framing (sizes, the CRLF
after each chunk's data, the last chunk and its trailer section), hands the data to the tail that
counts tokens, and says where the message ends, so the tap passes the replica's own bytes on and
knows when the response is over. Strict: anything but well-formed framing is a `ValueError`, and
the tap then closes both connections (what the gateway sees of a replica that breaks off).
"""

from __future__ import annotations

import re
from collections.abc import Callable

# a size line (the size in hex, any chunk extensions) or a trailer line; the same bound as h11's
# default for a message head
MAX_LINE = 16 * 1024
_SIZE = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?")

_LINE, _DATA, _DATA_END, _TRAILER = range(4)


class ChunkedEnd:
    """Feed it the body's bytes in order; `feed` returns where in those bytes the message ended
    (the index just past it), or None while it goes on."""

    def __init__(self, on_data: Callable[[bytes], None]) -> None:
        self._on_data = on_data
        self._state = _LINE
        self._left = 0  # data bytes of the current chunk still to come
        self._line = b""  # the part of a line that came so far
        self.done = False

    def feed(self, data: bytes) -> int | None:
        if self.done:
            raise ValueError("bytes after the end of the body")
        i, n = 0, len(data)
        while i < n:
            if self._state == _DATA:
                take = min(self._left, n - i)
                self._on_data(data[i : i + take])
                self._left -= take
                i += take
                if not self._left:
                    self._state = _DATA_END
                continue
            j = data.find(b"\n", i)
            if j < 0:
                self._line += data[i:]
                if len(self._line) > MAX_LINE:
                    raise ValueError("chunk framing line too long")
                return None
            line, self._line = self._line + data[i : j + 1], b""
            i = j + 1
            if len(line) > MAX_LINE or not line.endswith(b"\r\n"):
                raise ValueError("chunk framing line without CRLF")
            line = line[:-2]
            if self._state == _DATA_END:
                if line:
                    raise ValueError("chunk data longer than its size")
                self._state = _LINE
            elif self._state == _LINE:
                size = _SIZE.fullmatch(line)
                if size is None:
                    raise ValueError("bad chunk size line")
                self._left = int(size.group(1), 16)
                self._state = _DATA if self._left else _TRAILER
            elif not line:  # the empty line after the last chunk's trailers: the end
                self.done = True
                return i
        return None
