"""The paths a request names: what the agent asks the worker, to ground a small model's call.

A small model asked "What does the motd file say?" reads `motd.csv`, or a URL: it invents the path
the user just gave it. The worker holds the workspace, so it answers which words of the request
are paths there (`NamedPaths`); the prompted protocol then lets the picked call's path argument be
only one of them (`openmono.llm._pick`, `llm.tool_ground`). Like the repository map, the worker
tool that answers is never offered to the model (`internal` among its facts), and its `output` is
this model as JSON.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from openmono_contracts.repomap import MAX_IN_PLAY_TEXT

NAMED_PATHS_TOOL = "NamedPaths"
MAX_NAMED = 16


class NamedPathsParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # the user's request
    text: str = Field(max_length=MAX_IN_PLAY_TEXT)


class NamedPaths(BaseModel):
    """Words of the request that are paths, as the request spells them (workspace-relative)."""

    model_config = ConfigDict(extra="forbid")

    # an existing file or directory inside the workspace
    existing: list[str] = Field(default_factory=list, max_length=MAX_NAMED)
    # shaped like a file path (a `/`, or a name with an extension or a leading dot) and not there
    # yet: what a request to create a file names
    new: list[str] = Field(default_factory=list, max_length=MAX_NAMED)
