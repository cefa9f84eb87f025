"""The repository map request: what the agent asks the worker for, for its system prompt.

The map is computed where the workspace is (the worker holds it), by a worker tool the model is
never offered (`internal = True` among its facts): the agent calls it through its executor like
any tool call, so it runs in-process or on the Celery worker alike. The answer is a plain
`ToolResult` whose `output` is the map text (empty when there is nothing to map).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

REPO_MAP_TOOL = "RepoMap"
MAX_MAP_TOKENS = 16_384
MAX_IN_PLAY_TEXT = 8_000


class RepoMapParams(BaseModel):
    """What is in play: the map restarts its ranking at these files and boosts these names."""

    model_config = ConfigDict(extra="forbid")

    budget_tokens: int = Field(ge=0, le=MAX_MAP_TOKENS)
    # files the session's tools touched, workspace-relative or absolute inside it
    files: list[str] = Field(default_factory=list, max_length=200)
    # recent conversation text: the paths and identifiers it names are in play too
    text: str = Field(default="", max_length=MAX_IN_PLAY_TEXT)
