"""The tool registry: every public module of this package that defines `TOOL` is a tool.

Discovery keeps "a new tool is one module" true (WebSearch, WebFetch and Agent will arrive that
way). The registry is built once, on first use, ordered by tool name so specs are stable.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel

from openmono_worker.tools._base import Tool

AnyTool = Tool[BaseModel]


@cache
def registry() -> MappingProxyType[str, AnyTool]:
    """Tool name -> tool instance, read-only."""
    # The modules beside this one, found on disk (importing the package here would be a circle).
    package = __name__.rpartition(".")[0]
    found: dict[str, AnyTool] = {}
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        tool = getattr(module, "TOOL", None)
        if tool is None:
            continue
        if not isinstance(tool, Tool):
            raise TypeError(f"{module.__name__}.TOOL is not a Tool")
        if tool.name in found:
            raise ValueError(f"two tools are named {tool.name!r}")
        found[tool.name] = tool
    return MappingProxyType(dict(sorted(found.items())))


def get_tool(name: str) -> AnyTool | None:
    """The tool called `name`, or None."""
    return registry().get(name)


def tool_specs() -> list[dict[str, Any]]:
    """Name, description, JSON-schema parameters and flags of every tool, sorted by name."""
    return [tool.spec() for tool in registry().values()]
