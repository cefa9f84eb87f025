"""Token counts of one LLM response, read off the end of its body, and the file they go to.

llama-server ends every completion with its counts: the OpenAI routes with `usage`
(`prompt_tokens`, `completion_tokens`, `prompt_tokens_details.cached_tokens`) and `timings`
(`prompt_n`, `cache_n`, `predicted_n`), its own `/completion` with `timings` and
`tokens_evaluated`/`tokens_predicted`. A stream carries them in its last event, a plain JSON body
near its end, so the tap keeps only the body's tail (`TAIL_BYTES`) and reads the numbers out of it
once the response is over. The keys are matched as raw bytes: inside a JSON string (a reply, a
tool call's arguments) every quote is escaped, so `"prompt_tokens":` can only be a key. The last
match wins: a stream's counts come after anything the model wrote.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from openmono_contracts.gatewaykeys import TokenRecord
from openmono_contracts.privatefs import private_dir

# The last event of a stream is ~600 bytes; a plain body puts `usage` and `timings` within its
# last ~1 KB (after `choices`, or after `prompt` on /completion).
TAIL_BYTES = 16 * 1024


def _field(name: str) -> re.Pattern[bytes]:
    return re.compile(rb'"' + name.encode() + rb'"\s*:\s*(\d+)')


_PROMPT = _field("prompt_tokens")
_COMPLETION = _field("completion_tokens")
_CACHED = _field("cached_tokens")
_PROMPT_N = _field("prompt_n")
_CACHE_N = _field("cache_n")
_PREDICTED_N = _field("predicted_n")
_EVALUATED = _field("tokens_evaluated")
_PREDICTED = _field("tokens_predicted")


@dataclass(frozen=True)
class Counts:
    prompt: int | None = None
    completion: int | None = None
    cached: int | None = None


def _last(pattern: re.Pattern[bytes], tail: bytes) -> int | None:
    found = pattern.findall(tail)
    return int(found[-1]) if found else None


def counts(tail: bytes) -> Counts:
    """The counts the end of a response body carries (`Counts()` when it carries none)."""
    prompt, completion = _last(_PROMPT, tail), _last(_COMPLETION, tail)
    cached = _last(_CACHED, tail)
    cache_n = _last(_CACHE_N, tail)
    if cached is None:
        cached = cache_n
    if prompt is None:
        # timings: prompt_n is what was evaluated now, cache_n what came from the cache
        prompt_n = _last(_PROMPT_N, tail)
        evaluated = _last(_EVALUATED, tail)
        prompt = evaluated if prompt_n is None else prompt_n + (cache_n or 0)
    if completion is None:
        completion = _last(_PREDICTED_N, tail)
        if completion is None:
            completion = _last(_PREDICTED, tail)
    return Counts(prompt, completion, cached)


class Tail:
    """The last `TAIL_BYTES` (or a little more) of a body, kept as it streams by."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def add(self, data: bytes) -> None:
        self._buf += data
        if len(self._buf) > 2 * TAIL_BYTES:
            del self._buf[: len(self._buf) - TAIL_BYTES]

    def bytes(self) -> bytes:
        return bytes(self._buf)


class TokenLog:
    """`tokens.log` in the usage folder: one `TokenRecord` a line, rolled by size into
    `tokens-<unix ns>.log` (the newest `keep` rolled files are kept).

    Appends go through one O_APPEND descriptor, so a line is never interleaved with another; a
    crash mid-line leaves one unreadable line, which `keys usage` counts and skips."""

    def __init__(self, folder: Path, roll_bytes: int, keep: int) -> None:
        self.folder = folder
        self.roll_bytes = roll_bytes
        self.keep = keep
        self._fd: int | None = None
        self._size = 0

    @property
    def path(self) -> Path:
        return self.folder / "tokens.log"

    def write(self, record: TokenRecord) -> None:
        line = record.model_dump_json(exclude_none=True).encode() + b"\n"
        if self._fd is None:
            private_dir(self.folder)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            self._size = os.fstat(self._fd).st_size
        if self._size and self._size + len(line) > self.roll_bytes:
            self._roll()
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            self._size = 0
        os.write(self._fd, line)
        self._size += len(line)

    def _roll(self) -> None:
        self.close()
        # nanoseconds: two rolls within a millisecond must not overwrite one another
        self.path.rename(self.folder / f"tokens-{time.time_ns()}.log")
        rolled = sorted(self.folder.glob("tokens-*.log"))
        for old in rolled[: max(0, len(rolled) - self.keep)]:
            old.unlink(missing_ok=True)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
