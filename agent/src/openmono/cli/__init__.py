"""The `openmono` command line: one click group, each family of subcommands in its own module."""

from openmono.cli._main import main

__all__ = ["main"]
