"""Grep: search file contents with a regular expression (ripgrep when installed, Python otherwise).

Output is grep's own format, the same from both engines: `path:line:text` for a match,
`path-line-text` for a context line, `--` between separate groups when context is asked for, and a
summary line. Paths are relative to the workspace. Searches skip hidden files, binary files and what
`.gitignore` excludes; symlinks are not followed. Lines are cut at 500 characters.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from openmono_worker.errors import ToolError
from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome
from openmono_worker.tools._search import Line, Query, rg_path, search_python, search_rg

MAX_LINE_CHARS = 500


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(min_length=1, description="Regular expression to search for.")
    path: str | None = Field(
        default=None, description="File or directory to search (default: the workspace root)."
    )
    glob: str | None = Field(
        default=None, description="Only files matching this glob, e.g. '*.py' or 'src/**/*.ts'."
    )
    case_insensitive: bool = Field(default=False, description="Ignore case.")
    context_lines: int = Field(
        default=0, ge=0, le=20, description="Lines of context before and after each match."
    )
    max_results: int = Field(
        default=100, ge=1, le=2000, description="Stop after this many matching lines."
    )


def format_lines(lines: list[Line], context: int, max_results: int) -> tuple[str, bool]:
    """grep-style text for `lines`, cut after `max_results` matches; True if it was cut."""
    kept: list[Line] = []
    matches = 0
    cut = False
    for line in lines:
        if line.match:
            if matches == max_results:
                cut = True
                break
            matches += 1
        kept.append(line)
    if cut:
        last = next(x for x in reversed(kept) if x.match)
        while (
            kept
            and not kept[-1].match
            and (kept[-1].path != last.path or kept[-1].number > last.number + context)
        ):
            kept.pop()
    out: list[str] = []
    prev: Line | None = None
    for line in kept:
        if (
            context
            and prev is not None
            and (line.path != prev.path or line.number != prev.number + 1)
        ):
            out.append("--")
        sep = ":" if line.match else "-"
        text = line.text
        if len(text) > MAX_LINE_CHARS:
            text = text[:MAX_LINE_CHARS] + " … [line cut]"
        out.append(f"{line.path}{sep}{line.number}{sep}{text}")
        prev = line
    files = len({x.path for x in kept if x.match})
    summary = f"[{matches} matching line{'s' * (matches != 1)} in {files} file{'s' * (files != 1)}"
    summary += f"; stopped at max_results={max_results}]" if cut else "]"
    return "\n".join([*out, summary]), cut


class Grep(Tool[Params]):
    name = "Grep"
    description = (
        "Search file contents with a regular expression (ripgrep syntax). Returns "
        "path:line:text for each match. Skips hidden, binary and .gitignored files. Use glob to "
        "filter files and context_lines for surrounding lines."
    )
    read_only = True
    concurrency_safe = True
    path_params = ("path",)
    core = True
    kind = "search"
    params_model = Params

    def execute(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        target = ctx.resolve(params.path or ".", read=True)
        if not target.exists():
            raise ToolError(f"no such file or directory: {params.path}")
        query = Query(
            pattern=params.pattern,
            target=target,
            shown=ctx.show(target),
            glob=params.glob,
            case_insensitive=params.case_insensitive,
            context=params.context_lines,
            max_results=params.max_results,
        )
        rg = rg_path() if ctx.settings.grep_engine != "python" else None
        if ctx.settings.grep_engine == "rg" and rg is None:
            raise ToolError("WORKER_GREP_ENGINE=rg but ripgrep (rg) is not installed")
        lines = search_rg(rg, query, ctx) if rg else search_python(query, ctx)
        if not any(x.match for x in lines):
            return ToolOutcome(f"No matches for {params.pattern!r} in {query.shown}")
        text, cut = format_lines(lines, params.context_lines, params.max_results)
        return ToolOutcome(text, truncated=cut)


TOOL = Grep()
