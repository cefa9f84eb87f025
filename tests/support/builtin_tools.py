"""The tools every session starts with (the worker's and the conversation tools), for tests that
need the catalog or the facts without opening a session.

Calls the worker's tools would make run in-process; no test here saves user memory, so the data
dir the conversation tools are given is never written.
"""

from __future__ import annotations

from pathlib import Path

from openmono.agent import builtin_toolsets
from openmono.executor import LocalExecutor
from openmono.loop import ToolCatalog
from openmono_contracts.toolfacts import ToolFacts


def builtin_catalog(data_dir: Path = Path("/nonexistent/openmono-data")) -> ToolCatalog:
    return ToolCatalog(builtin_toolsets(LocalExecutor(), data_dir))


def builtin_facts() -> dict[str, ToolFacts]:
    """Name -> facts of every built-in tool."""
    return builtin_catalog().facts
