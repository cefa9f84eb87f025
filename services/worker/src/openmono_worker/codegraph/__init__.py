"""The code graph: definitions, uses and imports of every file, in every language it can parse.

    graph_for(workspace, cache_dir)   the process's graph of a workspace and its map builder
    save_graph(graph, cache_dir)      its copy on disk (content hash -> tags), for the next process
    CodeGraph.refresh()               re-read what changed on disk (a stat walk, every use)
    Mapper.build(budget, files, text) the ranked repository map within a token budget
    find_references, callers, ...     the CodeIntel operations over it, rendering text

Languages: Python, JavaScript, TypeScript / TSX, Go, Rust, Java, C, C++, C#, Ruby, PHP (grammars
from the tree-sitter language pack wheel). Every edge says how sure it is: "import" (through an
import, an include, the same package) or "name" (only a name match). `CodeIntel` answers from it
for every language but Python, where it adds to the deeper `ast` index (`codeintel`).
"""

from openmono_worker.codegraph._graph import CodeGraph
from openmono_worker.codegraph._langs import LANGS, LangSpec, spec_for
from openmono_worker.codegraph._map import Mapper, RepoMap, estimate_tokens
from openmono_worker.codegraph._ops import (
    Target,
    blast_radius,
    callees,
    callers,
    definition,
    describe,
    find_references,
    get_symbol,
    match_rank,
    outline,
    overview,
    search,
)
from openmono_worker.codegraph._store import forget_graphs, graph_for, save_graph
from openmono_worker.codegraph._tags import Def, FileTags, Import, Skipped
from openmono_worker.codegraph._walk import GENERATED_DIRS, MAX_FILE_BYTES, MAX_FILES

__all__ = [
    "GENERATED_DIRS",
    "LANGS",
    "MAX_FILES",
    "MAX_FILE_BYTES",
    "CodeGraph",
    "Def",
    "FileTags",
    "Import",
    "LangSpec",
    "Mapper",
    "RepoMap",
    "Skipped",
    "Target",
    "blast_radius",
    "callees",
    "callers",
    "definition",
    "describe",
    "estimate_tokens",
    "find_references",
    "forget_graphs",
    "get_symbol",
    "graph_for",
    "match_rank",
    "outline",
    "overview",
    "save_graph",
    "search",
    "spec_for",
]
