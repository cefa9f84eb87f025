"""One file's tags from its syntax tree: definitions with their owners, used names, imports.

The names a file uses are its identifier-shaped words, counted (a regular expression over the
bytes: three times cheaper than visiting every identifier node, and a name in a comment or a
string is a use worth ranking too); where a use is, exactly, is found later from the syntax tree
for the few files a query needs (`_locate.py`). The parse has a deadline (a pathological file
cannot stall the index); a tree with syntax errors still gives what parsed (tree-sitter recovers
locally) and is flagged. Definitions nest by their
byte spans: a function inside a class (or a Rust `impl`, or given an owner by `_syntax.owner`)
is a method of it, and its qualified name is the owner's plus its own.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

from tree_sitter import Node, Point, QueryCursor, Tree

from openmono_worker.codegraph import _syntax
from openmono_worker.codegraph._langs import LangSpec
from openmono_worker.codegraph._tags import Def, FileTags, Import

PARSE_DEADLINE_S = 5.0
_MAX_SIGNATURE = 160
_CONTAINERS = frozenset({"class", "interface", "struct", "trait", "enum", "impl", "module"})
_TYPES = frozenset({"class", "interface", "struct", "trait", "enum", "impl"})


class ParseTimeout(Exception):
    """The parser did not finish within its deadline."""


def parse(spec: LangSpec, data: bytes, deadline_s: float = PARSE_DEADLINE_S) -> Tree:
    parser = spec.parser()
    stop_at = time.monotonic() + deadline_s
    chunk = 1 << 16

    def read(offset: int, _point: Point) -> bytes:
        return data[offset : offset + chunk]

    def progress(_offset: int, _has_error: bool) -> bool:
        return time.monotonic() > stop_at  # True halts the parse

    try:
        tree = parser.parse(read, progress_callback=progress)
    except ValueError:  # py-tree-sitter 0.25 raises this when the callback halts the parse
        if time.monotonic() <= stop_at:
            raise
        tree = None
    if tree is None or time.monotonic() > stop_at:
        parser.reset()
        raise ParseTimeout
    return tree


def text_of(data: bytes) -> Callable[[Node], str]:
    def text(node: Node) -> str:
        return data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    return text


def _signature(data: bytes, node: Node) -> str:
    end = data.find(b"\n", node.start_byte)
    if end < 0 or end > node.end_byte:
        end = node.end_byte
    line = data[node.start_byte : end].decode("utf-8", "replace").strip()
    return line if len(line) <= _MAX_SIGNATURE else line[: _MAX_SIGNATURE - 3] + "..."


def _col(data: bytes, node: Node) -> int:
    line_start = data.rfind(b"\n", 0, node.start_byte) + 1
    return len(data[line_start : node.start_byte].decode("utf-8", "replace"))


def extract(spec: LangSpec, data: bytes, deadline_s: float = PARSE_DEADLINE_S) -> FileTags:
    tree = parse(spec, data, deadline_s)
    root = tree.root_node
    text = text_of(data)
    # (start, end, pattern, kind, def node, name node); the first pattern to name a node wins
    found: dict[int, tuple[int, str, Node, Node]] = {}
    scopes: list[tuple[int, int, str]] = []
    imports: list[Import] = []
    package = ""
    for pattern, caps in QueryCursor(spec.tags_query).matches(root):
        if "name" in caps:
            name_node = caps["name"][0]
            key = next((k for k in caps if k.startswith("def.")), None)
            if key is None:
                continue
            prior = found.get(name_node.start_byte)
            if prior is None or prior[0] > pattern:
                found[name_node.start_byte] = (pattern, key[4:], caps[key][0], name_node)
        elif "import" in caps:
            for node in caps["import"]:
                imports.extend(_syntax.imports(spec.id, node, text))
        elif "package" in caps:
            package = package or text(caps["package"][0])
        elif "scope" in caps:
            node = caps["scope"][0]
            scopes.append((node.start_byte, node.end_byte, _syntax.scope_name(spec.id, node, text)))
    # Walk definitions and scopes in document order, outer before inner, keeping a stack.
    items: list[tuple[int, int, int, str, Node | None, Node | None]] = [
        (d.start_byte, -d.end_byte, 0, kind, d, n) for _p, kind, d, n in found.values()
    ]
    items += [(s, -e, 1, name, None, None) for s, e, name in scopes]
    items.sort(key=lambda t: (t[0], t[1], t[2]))
    stack: list[tuple[int, str, str]] = []  # (end byte, qualified name, kind)
    defs: list[Def] = []
    for start, neg_end, _order, kind_or_name, def_node, at in items:
        while stack and stack[-1][0] <= start:
            stack.pop()
        parent, parent_kind = (stack[-1][1], stack[-1][2]) if stack else ("", "")
        if def_node is None or at is None:  # an impl block: a container with a name
            qname = (
                kind_or_name
                if not parent or parent_kind != "module"
                else f"{parent}.{kind_or_name}"
            )
            stack.append((-neg_end, qname, "impl"))
            continue
        kind = kind_or_name
        name = text(at)
        if at.type == "scope_resolution":  # Ruby `class A::B`
            inner = at.child_by_field_name("name")
            name = text(inner) if inner is not None else name
        explicit = _syntax.owner(spec.id, def_node, at, text)
        if explicit:
            parent, parent_kind = explicit, "class"
        if kind == "function" and parent_kind in _TYPES:
            kind = "method"
        elif kind == "method" and parent_kind not in _TYPES and not explicit:
            kind = "function" if spec.id in ("ruby", "php") and not parent else kind
        d = Def(
            name=name,
            kind=kind,
            line=at.start_point[0] + 1,
            col=_col(data, at),
            start=def_node.start_point[0] + 1,
            end=def_node.end_point[0] + 1,
            parent=parent,
            signature=_signature(data, def_node),
        )
        defs.append(d)
        if kind in _CONTAINERS:
            stack.append((-neg_end, d.qname, kind))
    counted = Counter(spec.words.findall(data))
    refs = {k.decode("utf-8", "replace"): v for k, v in counted.items()}
    for d in defs:  # a definition's own name is not a use
        left = refs.get(d.name, 0) - 1
        if left > 0:
            refs[d.name] = left
        else:
            refs.pop(d.name, None)
    return FileTags(
        lang=spec.id,
        defs=tuple(defs),
        refs=refs,
        imports=tuple(imports),
        package=package,
        errors=root.has_error,
    )
