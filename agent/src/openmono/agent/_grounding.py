"""Which words of a request are paths: asked of the worker, for the prompted call (`llm._ground`).

The worker holds the workspace, so the question goes through the session's executor like the
repository map's (`openmono_contracts.namedpaths`). Any failure (the worker gone, a slow answer,
an answer that does not parse) is None: the call is then left free, as without the setting.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from openmono_contracts import ToolRequest
from openmono_contracts.namedpaths import NAMED_PATHS_TOOL, NamedPaths, NamedPathsParams
from openmono_contracts.repomap import MAX_IN_PLAY_TEXT
from pydantic import ValidationError

from openmono.executor import Executor, ExecutorError
from openmono.llm import GROUND_TIMEOUT_S


class PathGrounding:
    """The `Grounding` of one session's model: its executor and workspace."""

    def __init__(self, executor: Executor, workspace: Path, session_id: str) -> None:
        self.executor = executor
        self.workspace = workspace
        self.session_id = session_id
        self._calls = itertools.count(1)

    async def __call__(self, text: str) -> NamedPaths | None:
        request = ToolRequest(
            tool=NAMED_PATHS_TOOL,
            params=NamedPathsParams(text=text[:MAX_IN_PLAY_TEXT]).model_dump(),
            call_id=f"named-{self.session_id}-{next(self._calls)}",
            session_id=self.session_id,
            workspace=str(self.workspace),
            timeout_s=GROUND_TIMEOUT_S,
        )
        try:
            result = await self.executor.run(request)
        except ExecutorError:
            return None
        if not result.ok:
            return None
        try:
            return NamedPaths.model_validate_json(result.output)
        except ValidationError:
            return None
