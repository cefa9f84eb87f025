"""Small text helpers shared by the file tools: binary sniffing, decoding, line numbers.

Atomic writes: `openmono_contracts.atomicfile.atomic_write` (the agent writes files that way too).
"""

from __future__ import annotations

from pathlib import Path

from openmono_worker.errors import ToolError

SNIFF_BYTES = 8192


def looks_binary(sample: bytes) -> bool:
    """A NUL byte in the first block means binary (what git and ripgrep decide too)."""
    return b"\x00" in sample[:SNIFF_BYTES]


def read_text(path: Path, shown: str) -> str:
    """The whole file as text; refuses binaries and directories.

    Undecodable bytes are kept as surrogate escapes, so an edit writes them back unchanged.
    """
    if path.is_dir():
        raise ToolError(f"{shown} is a directory; use ListDirectory")
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise ToolError(f"file not found: {shown}") from exc
    except OSError as exc:
        raise ToolError(f"cannot read {shown}: {exc.strerror}") from exc
    if looks_binary(data):
        raise ToolError(f"{shown} is a binary file ({len(data)} bytes); not edited as text")
    return data.decode("utf-8", errors="surrogateescape")


def printable(text: str) -> str:
    """`text` safe to show (and to encode as JSON): surrogate escapes become U+FFFD."""
    return text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")


def numbered(lines: list[str], first: int) -> str:
    """Lines prefixed with their 1-based numbers, cat -n style."""
    return "\n".join(f"{first + i:6d}\t{printable(line)}" for i, line in enumerate(lines))
