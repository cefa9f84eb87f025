"""RepoMap: the ranked repository map for the agent's system prompt (never offered to the model).

The code graph of the workspace (`openmono_worker.codegraph`) is refreshed (a stat walk, changed
files re-read), then ranked and cut to the budget (`Mapper.build`); the same map comes back at
no cost while nothing changed. Files named in play must be inside the workspace: others are
ignored, never read.
"""

from __future__ import annotations

from openmono_contracts.repomap import REPO_MAP_TOOL, RepoMapParams

from openmono_worker.codegraph import graph_for, save_graph
from openmono_worker.errors import ToolError
from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome


class RepoMap(Tool[RepoMapParams]):
    name = REPO_MAP_TOOL
    description = "The ranked repository map (files and key definitions) within a token budget."
    read_only = True
    concurrency_safe = True
    kind = "read"
    subagents = False
    internal = True
    params_model = RepoMapParams

    def execute(self, params: RepoMapParams, ctx: ToolContext) -> ToolOutcome:
        files = []
        for raw in params.files:
            try:
                files.append(ctx.show(ctx.resolve(raw)))
            except ToolError:
                continue  # outside the workspace: not in play here
        cache_dir = ctx.settings.data_dir / "codegraph"
        graph, mapper = graph_for(ctx.workspace, cache_dir)
        with graph.lock:
            if graph.refresh(ctx.cancel):
                save_graph(graph, cache_dir)
            ctx.check_cancelled()
            found = mapper.build(params.budget_tokens, files, params.text)
        return ToolOutcome(found.text)


TOOL = RepoMap()
