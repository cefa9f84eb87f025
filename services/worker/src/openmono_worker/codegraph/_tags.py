"""What the graph keeps of one file: its definitions, the names it uses, what it imports.

Plain named tuples of strings and ints: they are pickled into the disk cache by the thousand, and
small immutable records keep that copy compact and fast to load. Positions of the uses are not
kept (they would be most of the index); queries that need them parse the few files concerned
again (`_locate.py`).
"""

from __future__ import annotations

from typing import NamedTuple


class Def(NamedTuple):
    """One definition: `parent` is the qualified name of what encloses it ('' at top level)."""

    name: str
    kind: str  # class, interface, struct, enum, trait, type, function, method, ...
    line: int  # of the name, 1-based
    col: int  # of the name, 0-based characters
    start: int  # first line of the definition (1-based)
    end: int  # last line
    parent: str
    signature: str  # the definition's first line, trimmed

    @property
    def qname(self) -> str:
        return f"{self.parent}.{self.name}" if self.parent else self.name


class Import(NamedTuple):
    """One import as written; `_resolve.py` turns it into workspace files.

    kind: `module` binds the whole target (under `alias`), `names` binds `names` from it, `all`
    makes everything in it visible, `path` is a file path (an include, a require)."""

    target: str
    kind: str
    names: tuple[str, ...] = ()
    alias: str = ""


class FileTags(NamedTuple):
    lang: str
    defs: tuple[Def, ...]
    refs: dict[str, int]  # names used (definitions' own names not counted) -> how often
    imports: tuple[Import, ...]
    package: str  # the declared package / namespace ('' where the language has none)
    errors: bool  # the parser had to recover from syntax errors somewhere


class Skipped(NamedTuple):
    """A file the graph left out, and why (shown by the tool and the map's footer)."""

    path: str
    reason: str
