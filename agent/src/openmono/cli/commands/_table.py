"""Where the commands' tables are printed."""

from __future__ import annotations

from rich.console import Console


def table_console() -> Console:
    """stdout; piped or redirected (`openmono status | ...`, a log), lines as long as the rows
    instead of 80 columns of wraps."""
    console = Console()
    return console if console.is_terminal else Console(width=200)
