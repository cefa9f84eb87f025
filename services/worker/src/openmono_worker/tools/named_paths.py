"""NamedPaths: which words of a request are paths in the workspace (never offered to the model).

The agent asks before a small model's first call of a turn (`openmono_contracts.namedpaths`). A
word counts when it resolves inside the workspace (the same guard as every tool: `..`, absolute
paths elsewhere and symlinks out are not followed, only skipped) and exists there, or when it is
shaped like a file the request wants made (`new`). Only stat calls: nothing is read.
"""

from __future__ import annotations

import re

from openmono_contracts.namedpaths import (
    MAX_NAMED,
    NAMED_PATHS_TOOL,
    NamedPaths,
    NamedPathsParams,
)

from openmono_worker.errors import ToolError
from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome

_WORD = re.compile(r"[\w./+-]+")
# a name with an extension, a dotfile, or anything with a directory part; not a version number
_FILE_SHAPED = re.compile(r"(?:[\w.+-]*/)*(?:\.[\w+-]+|[\w+-][\w.+-]*\.[A-Za-z][\w-]{0,9})")
_NUMBERISH = re.compile(r"[\d.]+")
MAX_WORDS = 200
MAX_LEN = 255


def words(text: str) -> list[str]:
    """The request's words that could be paths, as spelt, once each (a sentence's full stop
    dropped)."""
    out: dict[str, None] = {}
    for raw in _WORD.findall(text)[:MAX_WORDS]:
        word = raw.rstrip(".")
        if word.startswith("./"):
            word = word[2:]
        if word and len(word) <= MAX_LEN and word.strip("./") and not _NUMBERISH.fullmatch(word):
            out[word] = None
    return list(out)


class NamedPathsTool(Tool[NamedPathsParams]):
    name = NAMED_PATHS_TOOL
    description = "Which words of a request are paths in the workspace."
    read_only = True
    concurrency_safe = True
    kind = "read"
    subagents = False
    internal = True
    params_model = NamedPathsParams

    def execute(self, params: NamedPathsParams, ctx: ToolContext) -> ToolOutcome:
        found = NamedPaths()
        for word in words(params.text):
            try:
                path = ctx.resolve(word)
            except ToolError:
                continue  # outside the workspace: not a path the call may take
            if path == ctx.workspace:
                continue
            if path.exists():
                if len(found.existing) < MAX_NAMED:
                    found.existing.append(word)
            elif _FILE_SHAPED.fullmatch(word) and len(found.new) < MAX_NAMED:
                found.new.append(word)
            ctx.check_cancelled()
        return ToolOutcome(found.model_dump_json())


TOOL = NamedPathsTool()
