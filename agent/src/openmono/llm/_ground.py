"""The picked call's path held to the paths the request names (`llm.tool_ground`, issue 42).

Small models copy a path badly: asked "Tell me what the motd file says", the bundled 135M model
read `motd.csv`; asked about `service/app.yaml`, a URL. With `two_step` the turn's first reply
is one call to the picked tool; `named` asks the workspace which words of the request are paths
(`openmono_contracts.namedpaths`, answered by the worker, which holds the files) and lets each
path argument of that call be only one of them, spelt out in the grammar as an enum:

- a tool that reads (FileRead, ListDirectory, Grep's folder): an existing path the request names;
- a tool that writes: the same, plus a file the request names that is not there yet, and only
  when it names one ("Create README.md ..."): "Write a test for foo.py" names no file to create,
  so its call is left free rather than pointed at foo.py.

Nothing named, or the worker not answering in time: the call is left as it was. Only the turn's
first call is held: after a result the model may go where the result points.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from openmono_contracts.namedpaths import NamedPaths

from openmono.llm._messages import ToolSpec

# Asks the workspace which words of a request are paths; None when it could not say.
Grounding = Callable[[str], Awaitable[NamedPaths | None]]


def grounded(tool: ToolSpec, named: NamedPaths) -> ToolSpec | None:
    """`tool` with each path argument's schema replaced by the allowed paths (None: nothing to
    hold it to)."""
    allowed = list(named.existing)
    if tool.writes:
        allowed = [*named.new, *allowed] if named.new else []
    props = tool.parameters.get("properties")
    if not allowed or not tool.paths or not isinstance(props, dict):
        return None
    held: dict[str, Any] = dict(props)
    for name in tool.paths:
        if name in held:
            held[name] = {"enum": allowed}
    if held == props:
        return None
    return tool.model_copy(update={"parameters": {**tool.parameters, "properties": held}})
