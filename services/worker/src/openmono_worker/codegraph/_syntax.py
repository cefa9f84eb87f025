"""Per-language readings of syntax the tag query only points at: imports, and owners of methods.

`imports(lang, node, text)` turns one `@import` node into `Import`s as written (resolution to
files is `_resolve.py`'s). `owner(lang, def_node, name_node, text)` names the type a definition
belongs to when that is not the enclosing node: a Go method's receiver, a C++ `Type::method`
defined outside its class, a Rust `impl Type` block.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from tree_sitter import Node

from openmono_worker.codegraph._tags import Import

Text = Callable[[Node], str]


def _strings(node: Node, text: Text) -> Iterator[str]:
    """The contents of the string literals under `node` (quotes stripped)."""
    todo = [node]
    while todo:
        cur = todo.pop()
        if cur.type in ("string_content", "string_fragment", "interpreted_string_literal_content"):
            yield text(cur)
        elif cur.type in ("string_literal", "system_lib_string") and cur.named_child_count == 0:
            yield text(cur).strip("\"'<>")
        elif cur.type in ("raw_string_literal",):
            yield text(cur).strip("`")
        else:
            todo.extend(reversed(cur.named_children))


def _python(node: Node, text: Text) -> list[Import]:
    if node.type == "import_statement":
        out = []
        for item in node.children_by_field_name("name"):
            if item.type == "aliased_import":
                name = item.child_by_field_name("name")
                alias = item.child_by_field_name("alias")
                target = text(name) if name else ""
                out.append(Import(target, "module", (), text(alias) if alias else target))
            else:
                target = text(item)
                out.append(Import(target, "module", (), target.split(".")[0]))
        return out
    module = node.child_by_field_name("module_name")
    target = text(module) if module is not None else ""
    if any(c.type == "wildcard_import" for c in node.children):
        return [Import(target, "all")]
    names = []
    for item in node.children_by_field_name("name"):
        inner = item.child_by_field_name("name") if item.type == "aliased_import" else item
        if inner is not None:
            names.append(text(inner))
    return [Import(target, "names", tuple(names))]


def _js(node: Node, text: Text) -> list[Import]:
    if node.type == "variable_declarator":  # const x = require("..."), const {a, b} = require()
        value = node.child_by_field_name("value")
        source = next(_strings(value, text), "") if value is not None else ""
        name = node.child_by_field_name("name")
        if not source or name is None:
            return []
        if name.type == "identifier":
            return [Import(source, "module", (), text(name))]
        bound = tuple(
            text(c.child_by_field_name("key") or c) if c.type == "pair_pattern" else text(c)
            for c in name.named_children
            if c.type in ("shorthand_property_identifier_pattern", "pair_pattern")
        )
        return [Import(source, "names", bound)]
    source_node = node.child_by_field_name("source")
    source = next(_strings(source_node, text), "") if source_node is not None else ""
    if not source:
        return []
    names: list[str] = []
    alias = ""
    kind = "names"
    for child in node.named_children:
        todo = [child]
        while todo:
            cur = todo.pop()
            if cur.type in ("import_specifier", "export_specifier"):
                name = cur.child_by_field_name("name")
                if name is not None:
                    names.append(text(name))
            elif cur.type == "namespace_import":
                ident = next((c for c in cur.named_children if c.type == "identifier"), None)
                alias, kind = (text(ident) if ident else ""), "module"
            elif cur.type == "namespace_export":
                kind = "all"
            elif (
                cur.type == "identifier"
                and cur.parent is not None
                and (cur.parent.type == "import_clause")
            ):
                names.append("default")
                alias = alias or text(cur)
            elif cur.type not in ("string",):
                todo.extend(cur.named_children)
    if node.type == "export_statement" and not names and kind == "names":
        kind = "all"  # export * from "..."
    if kind == "names" and not names:
        kind = "module"  # import "./side-effects"
    return [Import(source, kind, tuple(names), alias)]


def _go(node: Node, text: Text) -> list[Import]:
    path = node.child_by_field_name("path")
    target = next(_strings(path, text), "") if path is not None else ""
    if not target:
        return []
    name = node.child_by_field_name("name")
    alias = text(name) if name is not None else target.rstrip("/").rpartition("/")[2]
    return [Import(target, "all" if alias == "." else "module", (), alias)]


def _rust_paths(node: Node, prefix: str, text: Text) -> Iterator[tuple[str, str]]:
    """(path, bound name) pairs of a use tree; a glob's bound name is '*'."""
    t = node.type
    if t in ("identifier", "crate", "self", "super", "scoped_identifier", "metavariable"):
        path = f"{prefix}::{text(node)}" if prefix else text(node)
        yield path, path.rpartition("::")[2]
    elif t == "use_as_clause":
        inner = node.child_by_field_name("path")
        alias = node.child_by_field_name("alias")
        if inner is not None:
            path = f"{prefix}::{text(inner)}" if prefix else text(inner)
            yield path, text(alias) if alias else path.rpartition("::")[2]
    elif t == "use_wildcard":
        inner = next(iter(node.named_children), None)
        path = text(inner) if inner is not None else ""
        yield (f"{prefix}::{path}" if prefix and path else prefix or path), "*"
    elif t == "scoped_use_list":
        path_node = node.child_by_field_name("path")
        lst = node.child_by_field_name("list")
        sub = text(path_node) if path_node is not None else ""
        new_prefix = f"{prefix}::{sub}" if prefix and sub else prefix or sub
        if lst is not None:
            for child in lst.named_children:
                yield from _rust_paths(child, new_prefix, text)
    elif t == "use_list":
        for child in node.named_children:
            yield from _rust_paths(child, prefix, text)


def _rust(node: Node, text: Text) -> list[Import]:
    if node.type == "mod_item":
        mod = node.child_by_field_name("name")
        return [Import(text(mod), "path", (), text(mod))] if mod is not None else []
    arg = node.child_by_field_name("argument")
    if arg is None:
        return []
    out = []
    for path, bound in _rust_paths(arg, "", text):
        if bound == "*":
            out.append(Import(path, "all"))
        else:
            module, _, name = path.rpartition("::")
            out.append(Import(path, "names", (name,), bound))
            if module:
                out.append(Import(module, "module", (), module.rpartition("::")[2]))
    return out


def _java(node: Node, text: Text) -> list[Import]:
    path = next(
        (c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None
    )
    if path is None:
        return []
    target = text(path)
    if any(c.type == "asterisk" for c in node.named_children):
        return [Import(target, "all")]
    pkg, _, name = target.rpartition(".")
    return [Import(pkg, "names", (name,))]


def _c(node: Node, text: Text) -> list[Import]:
    path = node.child_by_field_name("path")
    if path is None:
        return []
    if path.type == "system_lib_string":
        target = text(path).strip("<>")
    else:
        target = next(_strings(path, text), "")
    return [Import(target, "path")] if target else []


def _csharp(node: Node, text: Text) -> list[Import]:
    names = [c for c in node.named_children if c.type in ("identifier", "qualified_name")]
    if not names:
        return []
    target = text(names[-1])  # `using Alias = A.B;` names the target last
    return [Import(target, "all")]


def _ruby(node: Node, text: Text) -> list[Import]:
    method = node.child_by_field_name("method")
    args = node.child_by_field_name("arguments")
    if method is None or args is None:
        return []
    kind = "relative" if text(method) == "require_relative" else "path"
    return [Import(s, kind) for s in _strings(args, text) if s]


def _php(node: Node, text: Text) -> list[Import]:
    if node.type != "namespace_use_declaration":
        found = [s for s in _strings(node, text) if s.endswith(".php") or "/" in s]
        return [Import(found[-1].lstrip("/"), "path")] if found else []
    out = []
    group_prefix = ""
    for child in node.named_children:
        if child.type in ("namespace_name", "qualified_name", "name") and child.next_named_sibling:
            group_prefix = text(child)  # use A\B\{C, D};
    for clause in _descend(node, "namespace_use_clause"):
        name_node = next(
            (c for c in clause.named_children if c.type in ("qualified_name", "name")), None
        )
        if name_node is None:
            continue
        full = text(name_node).lstrip("\\")
        if group_prefix:
            full = f"{group_prefix.strip(chr(92))}\\{full}"
        namespace, _, name = full.rpartition("\\")
        out.append(Import(namespace, "names", (name,)))
    return out


def _descend(node: Node, kind: str) -> Iterator[Node]:
    todo = [node]
    while todo:
        cur = todo.pop()
        if cur.type == kind:
            yield cur
        else:
            todo.extend(reversed(cur.named_children))


_IMPORTS: dict[str, Callable[[Node, Text], list[Import]]] = {
    "python": _python,
    "javascript": _js,
    "typescript": _js,
    "tsx": _js,
    "go": _go,
    "rust": _rust,
    "java": _java,
    "c": _c,
    "cpp": _c,
    "csharp": _csharp,
    "ruby": _ruby,
    "php": _php,
}


def imports(lang: str, node: Node, text: Text) -> list[Import]:
    reader = _IMPORTS.get(lang)
    return reader(node, text) if reader is not None else []


def _type_name(node: Node | None, text: Text) -> str:
    """The bare name of a type expression (`*Circle`, `Circle<T>`, `a::Circle` -> Circle)."""
    while node is not None:
        if node.type in ("type_identifier", "identifier", "namespace_identifier"):
            return text(node)
        inner = (
            node.child_by_field_name("type")
            or node.child_by_field_name("name")
            or next(iter(node.named_children), None)
        )
        if inner is None or inner.type == node.type:
            return text(node).split("<")[0].rpartition("::")[2]
        node = inner
    return ""


def owner(lang: str, def_node: Node, name_node: Node, text: Text) -> str:
    """The type a definition belongs to when its position in the tree does not say so."""
    if lang == "go" and def_node.type == "method_declaration":
        receiver = def_node.child_by_field_name("receiver")
        param = next(iter(receiver.named_children), None) if receiver is not None else None
        return _type_name(param.child_by_field_name("type"), text) if param is not None else ""
    parent = name_node.parent
    if lang == "cpp" and parent is not None and parent.type == "qualified_identifier":
        scope = parent.child_by_field_name("scope")
        return _type_name(scope, text) if scope is not None else ""
    return ""


def scope_name(lang: str, node: Node, text: Text) -> str:
    """The type an `@scope` node (a Rust `impl` block) attaches its functions to."""
    if lang == "rust":
        return _type_name(node.child_by_field_name("type"), text)
    return ""
