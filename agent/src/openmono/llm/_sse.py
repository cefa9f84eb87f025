"""Incremental Server-Sent Events parser: bytes in, complete messages out.

It follows the SSE rules where they matter to an LLM stream: lines end in LF, CR or CRLF (even
when a CRLF is split across two reads), `data:` lines of one message are joined with LF, a blank
line ends a message, lines starting with `:` are comments (keep-alives of llama.cpp and proxies).
One deviation on purpose: llama.cpp writes mid-stream failures as a bare `error: {...}` line, which
the spec would ignore as an unknown field; we surface it as a message whose `event` is "error".
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_NEWLINE = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SSEMessage:
    """One dispatched message; `event` is "message" unless an `event:`/`error:` line said so."""

    data: str
    event: str = "message"


class SSEParser:
    """Feed it raw bytes as they arrive; it returns the messages they completed."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buf = ""
        self._data: list[str] = []
        self._event: str | None = None

    def feed(self, chunk: bytes) -> list[SSEMessage]:
        return self._feed_text(self._decoder.decode(chunk))

    def close(self) -> list[SSEMessage]:
        """End of stream: a last message not followed by a blank line is still delivered."""
        out = self._feed_text(self._decoder.decode(b"", final=True))
        if self._buf:
            # An unterminated last line: take it as a line (a lone CR was a line end all along).
            line, self._buf = self._buf.rstrip("\r"), ""
            self._line(line, out)
        self._dispatch(out)
        return out

    def _feed_text(self, text: str) -> list[SSEMessage]:
        out: list[SSEMessage] = []
        if not text:
            return out
        buf = self._buf + text
        start = 0
        for m in _NEWLINE.finditer(buf):
            if m.group() == "\r" and m.end() == len(buf):
                break  # maybe the first half of a CRLF split across reads: wait for more
            self._line(buf[start : m.start()], out)
            start = m.end()
        self._buf = buf[start:]
        return out

    def _line(self, line: str, out: list[SSEMessage]) -> None:
        if not line:
            self._dispatch(out)
            return
        if line[0] == ":":
            return  # comment / keep-alive
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "error":
            # llama.cpp's bare `error: {...}` frame: a message on its own, blank line or not.
            self._dispatch(out)
            out.append(SSEMessage(data=value, event="error"))
        # id:, retry: and unknown fields are ignored, as the spec says.

    def _dispatch(self, out: list[SSEMessage]) -> None:
        if self._data:
            out.append(SSEMessage(data="\n".join(self._data), event=self._event or "message"))
        self._data = []
        self._event = None
