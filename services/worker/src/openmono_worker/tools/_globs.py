"""Glob patterns as regular expressions, with the path semantics people expect from shells and git.

`*` and `?` never cross a `/`, `**` matches any number of directories (also none), `[abc]` and
`{a,b}` work. `fnmatch` cannot be used: its `*` crosses directory separators.
"""

from __future__ import annotations

import re
from functools import lru_cache


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    depth = 0  # inside {...}
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if i < n and pattern[i] == "/":
                    out.append("(?:.*/)?")
                    i += 1
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
                i = end
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    out.extend(")" * depth)
    return "".join(out)


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """A regex matching whole relative POSIX paths against `pattern`."""
    return re.compile(rf"(?s:{_translate(pattern)})\Z")


def glob_match(pattern: str, rel_path: str) -> bool:
    """True when `rel_path` matches. A pattern without `/` is matched against the file name."""
    target = rel_path if "/" in pattern else rel_path.rsplit("/", 1)[-1]
    return compile_glob(pattern).match(target) is not None
