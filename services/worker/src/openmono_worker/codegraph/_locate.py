"""Where names are used, exactly: a file parsed again for the few queries that need positions.

The graph keeps only which names a file uses and how often; `uses(graph, file, names)` parses
that file and returns each identifier node spelling one of the names (the definitions' own
name positions left out), with whether it is called and the innermost definition it is in.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import NamedTuple

from tree_sitter import Node, QueryCursor

from openmono_worker.codegraph._extract import ParseTimeout, parse
from openmono_worker.codegraph._graph import CodeGraph
from openmono_worker.codegraph._jsdoc import mentions
from openmono_worker.codegraph._langs import LangSpec, spec_for
from openmono_worker.codegraph._tags import Def

# A member access wraps the name it reaches (obj.name): the call is around the whole access.
_MEMBER = {
    "member_expression": "property",
    "attribute": "attribute",
    "selector_expression": "field",
    "field_expression": "field",
    "scoped_identifier": "name",
    "qualified_identifier": "name",
    "member_access_expression": "name",
    "scope_resolution": "name",
    "generic_function": "function",
}
_CALLEE_FIELDS = ("function", "method", "name", "macro", "type", "constructor")


class Use(NamedTuple):
    name: str
    line: int  # 1-based
    col: int  # 0-based characters
    call: bool
    scope: Def | None  # the innermost definition around it (None: top level)
    text: str  # the source line, trimmed
    doc: bool = False  # named in documentation (a JSDoc link or type), not used by code


def _is_call(node: Node, spec: LangSpec) -> bool:
    cur = node
    parent = cur.parent
    while parent is not None and parent.type in _MEMBER:
        reached = parent.child_by_field_name(_MEMBER[parent.type])
        if reached is None or reached.id != cur.id:
            break
        cur, parent = parent, parent.parent
    if parent is None or parent.type not in spec.call_types:
        return False
    for field in _CALLEE_FIELDS:
        callee = parent.child_by_field_name(field)
        if callee is not None:
            return callee.id == cur.id
    first = parent.named_child(0)
    return first is not None and first.id == cur.id


def enclosing(defs: Collection[Def], line: int) -> Def | None:
    best: Def | None = None
    for d in defs:
        if d.start <= line <= d.end and (best is None or d.end - d.start < best.end - best.start):
            best = d
    return best


def uses(
    graph: CodeGraph, rel: str, names: Collection[str] | None, lines: tuple[int, int] | None = None
) -> list[Use]:
    """Uses in `rel` of `names` (every name when None), within `lines` (inclusive) if given."""
    spec = spec_for(rel)
    tags = graph.tags.get(rel)
    if spec is None or tags is None:
        return []
    try:
        data = (graph.workspace / rel).read_bytes()
        tree = parse(spec, data)
    except (OSError, ParseTimeout):
        return []
    cursor = QueryCursor(spec.refs_query)
    if lines is not None:
        cursor.set_point_range((lines[0] - 1, 0), (lines[1], 0))
    own = {(d.line, d.col, d.name) for d in tags.defs}
    source = data.decode("utf-8", "replace").splitlines()
    wanted = set(names) if names is not None else None
    out: list[Use] = []
    for node in cursor.captures(tree.root_node).get("ref", ()):
        name = data[node.start_byte : node.end_byte].decode("utf-8", "replace")
        if wanted is not None and name not in wanted:
            continue
        row = node.start_point[0]
        line_start = data.rfind(b"\n", 0, node.start_byte) + 1
        col = len(data[line_start : node.start_byte].decode("utf-8", "replace"))
        if (row + 1, col, name) in own:
            continue
        text = source[row].strip() if row < len(source) else ""
        out.append(
            Use(name, row + 1, col, _is_call(node, spec), enclosing(tags.defs, row + 1), text)
        )
    if spec.jsdoc:
        comments = QueryCursor(spec.comments_query)
        if lines is not None:
            comments.set_point_range((lines[0] - 1, 0), (lines[1], 0))
        for node in comments.captures(tree.root_node).get("comment", ()):
            out += _doc_uses(data, node, wanted, tags.defs, source)
    out.sort(key=lambda u: (u.line, u.col))
    return out


def _doc_uses(
    data: bytes, node: Node, wanted: set[str] | None, defs: Collection[Def], source: list[str]
) -> list[Use]:
    """The names a JSDoc comment (`node`) gives to code, as documentation uses."""
    found: list[Use] = []
    comment = data[node.start_byte : node.end_byte]
    for offset, name in mentions(comment):
        if wanted is not None and name not in wanted:
            continue
        at = node.start_byte + offset
        row = node.start_point[0] + comment.count(b"\n", 0, offset)
        line_start = data.rfind(b"\n", 0, at) + 1
        col = len(data[line_start:at].decode("utf-8", "replace"))
        text = source[row].strip() if row < len(source) else ""
        found.append(Use(name, row + 1, col, False, enclosing(defs, row + 1), text, doc=True))
    return found
