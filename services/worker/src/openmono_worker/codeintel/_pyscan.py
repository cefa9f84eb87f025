"""What one Python file defines and uses, from its syntax tree alone (no imports are run).

`scan_file` returns the file's symbols (module, classes, functions, methods, module and class
variables, with signatures and line spans), its module-level bindings (imports and definitions:
name -> absolute dotted target) and its references: every dotted name it loads, with where it
starts and who (the innermost enclosing function or class, else the module) uses it. A
reference's head is resolved as far as one file allows: a local variable is `unknown` (its type is
not known without inference), `self`/`cls` in a method is the class, a function-level import is
its target, anything else is looked up later in the module's bindings (`_pyindex.py`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

SymbolKind = Literal["module", "class", "function", "method", "variable", "attribute"]
RefKind = Literal["load", "call", "import", "base", "decorator", "store"]
HeadKind = Literal["abs", "self", "super", "module", "unknown"]


@dataclass(frozen=True)
class Symbol:
    qname: str
    name: str
    kind: SymbolKind
    file: str
    line: int  # the `def`/`class` line (1-based)
    start: int  # first line including decorators
    end: int
    signature: str = ""
    parent: str | None = None
    bases: tuple[tuple[HeadKind, str, tuple[str, ...]], ...] = ()
    doc: str = ""


@dataclass(frozen=True)
class Ref:
    head_kind: HeadKind
    # abs: a dotted qname; self: the class `self`/`cls` stand for (not itself a use of the
    # class); super: the class whose method calls `super()` (its members are looked up in the
    # bases); module: a name to look up in the module's bindings; unknown: "" (a local)
    head: str
    rest: tuple[str, ...]
    # (line, col) of each component of the chain (head first), 1-based line, 0-based col
    spots: tuple[tuple[int, int], ...]
    scope: str  # qname of the enclosing symbol
    kind: RefKind


@dataclass
class FileFacts:
    module: str
    file: str
    is_package: bool
    symbols: list[Symbol] = field(default_factory=list)
    bindings: dict[str, str] = field(default_factory=dict)
    star_imports: list[str] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)
    syntax_error: str | None = None


def _first_doc_line(node: ast.AST) -> str:
    if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
        doc = ast.get_docstring(node, clean=True)
        if doc:
            return doc.strip().splitlines()[0][:200]
    return ""


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    prefix = "async def " if isinstance(node, ast.AsyncFunctionDef) else "def "
    ret = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    return f"{prefix}{node.name}({ast.unparse(node.args)}){ret}"


def _class_signature(node: ast.ClassDef) -> str:
    args = [ast.unparse(b) for b in node.bases] + [ast.unparse(k) for k in node.keywords]
    return f"class {node.name}" + (f"({', '.join(args)})" if args else "")


def _chain(node: ast.expr) -> tuple[list[str], list[tuple[int, int]], ast.expr] | None:
    """`a.b.c` -> (["a","b","c"], spots, root Name); `super().m` -> (["super()","m"], ...);
    None when the root is neither a plain name nor a zero-argument `super()`."""
    parts: list[str] = []
    spots: list[tuple[int, int]] = []
    cur = node
    while isinstance(cur, ast.Attribute):
        parts.append(cur.attr)
        end_line = cur.end_lineno or cur.lineno
        end_col = cur.end_col_offset if cur.end_col_offset is not None else cur.col_offset
        spots.append((end_line, max(0, end_col - len(cur.attr))))
        cur = cur.value
    if _is_super(cur) and parts:
        parts.append(SUPER)
    elif isinstance(cur, ast.Name):
        parts.append(cur.id)
    else:
        return None
    spots.append((cur.lineno, cur.col_offset))
    return parts[::-1], spots[::-1], cur


# the head of a `super().name` chain (not an identifier, so no name can shadow it)
SUPER = "super()"


def _is_super(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "super"
        and not node.args
        and not node.keywords
    )


def _bound_names(body: list[ast.stmt], args: ast.arguments | None) -> set[str]:
    """Names a function binds locally (not descending into nested scopes), minus `global`s."""
    names: set[str] = set()
    declared_global: set[str] = set()
    if args is not None:
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if a is not None:
                names.add(a.arg)
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            declared_global.update(node.names)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)
        todo.extend(ast.iter_child_nodes(node))
    return names - declared_global


@dataclass
class _Scope:
    kind: Literal["module", "class", "function"]
    qname: str
    names: set[str]
    imports: dict[str, str] = field(default_factory=dict)  # function-level imports
    self_class: str | None = None  # in a method: the class `self`/`cls` stand for


class _Scanner(ast.NodeVisitor):
    def __init__(self, facts: FileFacts) -> None:
        self.facts = facts
        self.scopes: list[_Scope] = [_Scope("module", facts.module, set())]
        self.owner: str = facts.module  # who the next reference is attributed to

    # -- helpers -----------------------------------------------------------------------------

    def _package(self) -> str:
        mod = self.facts.module
        return mod if self.facts.is_package else mod.rpartition(".")[0]

    def _absolute(self, module: str | None, level: int) -> str:
        if level == 0:
            return module or ""
        base = self._package().split(".") if self._package() else []
        if level > 1:
            base = base[: len(base) - (level - 1)] if level - 1 <= len(base) else []
        return ".".join([*base, *([module] if module else [])])

    def _head(self, name: str) -> tuple[HeadKind, str]:
        if name == SUPER:
            method = next((s for s in reversed(self.scopes) if s.kind == "function"), None)
            if method is None or method.self_class is None:
                return "unknown", ""  # super() outside a method: nothing to resolve against
            return "super", method.self_class
        for scope in reversed(self.scopes):
            if scope.kind == "class" and scope is not self.scopes[-1]:
                continue  # class bodies do not enclose their methods
            if scope.kind == "function":
                if name in scope.imports:
                    return "abs", scope.imports[name]
                if scope.self_class is not None and name in ("self", "cls"):
                    return "self", scope.self_class
                if name in scope.names:
                    return "unknown", ""
            elif scope.kind == "class":
                if name in scope.names:
                    return "abs", f"{scope.qname}.{name}"
            else:
                return "module", name
        return "module", name

    def _ref(self, node: ast.expr, kind: RefKind) -> bool:
        found = _chain(node)
        if found is None:
            return False
        parts, spots, _root = found
        head_kind, head = self._head(parts[0])
        self.facts.refs.append(
            Ref(head_kind, head, tuple(parts[1:]), tuple(spots), self.owner, kind)
        )
        return True

    def _add(self, sym: Symbol) -> None:
        self.facts.symbols.append(sym)

    def _visit_with_owner(self, owner: str, nodes: Iterator[ast.AST] | list[ast.expr]) -> None:
        saved, self.owner = self.owner, owner
        for n in nodes:
            self.visit(n)
        self.owner = saved

    # -- definitions --------------------------------------------------------------------------

    def _bind_decorated(
        self,
        outer: _Scope,
        node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
        qname: str,
    ) -> None:
        """A def or class binds its name in the enclosing scope; its decorators are uses."""
        if outer.kind == "module":
            self.facts.bindings[node.name] = qname
        outer.names.add(node.name)
        for deco in node.decorator_list:
            self._visit_expr_as(qname, deco, "decorator")

    def _def(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer = self.scopes[-1]
        qname = f"{outer.qname}.{node.name}"
        kind: SymbolKind = "method" if outer.kind == "class" else "function"
        start = min([d.lineno for d in node.decorator_list] + [node.lineno])
        self._add(
            Symbol(
                qname,
                node.name,
                kind,
                self.facts.file,
                node.lineno,
                start,
                node.end_lineno or node.lineno,
                _signature(node),
                outer.qname,
                (),
                _first_doc_line(node),
            )
        )
        self._bind_decorated(outer, node, qname)
        annotations: list[ast.expr] = [
            a.annotation
            for a in (
                *node.args.posonlyargs,
                *node.args.args,
                *node.args.kwonlyargs,
                node.args.vararg,
                node.args.kwarg,
            )
            if a is not None and a.annotation is not None
        ]
        defaults = [d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None]
        extra = [*annotations, *defaults, *([node.returns] if node.returns else [])]
        self._visit_with_owner(qname, extra)
        first = (node.args.posonlyargs + node.args.args)[:1]
        is_static = any(
            isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list
        )
        self_class = outer.qname if outer.kind == "class" and first and not is_static else None
        scope = _Scope("function", qname, _bound_names(node.body, node.args))
        if self_class is not None and first[0].arg not in ("self", "cls"):
            scope.names.discard(first[0].arg)
            scope.imports[first[0].arg] = self_class  # an unusual name for self: same meaning
        scope.self_class = self_class
        self.scopes.append(scope)
        self._visit_with_owner(qname, iter(node.body))
        self.scopes.pop()

    visit_FunctionDef = _def
    visit_AsyncFunctionDef = _def

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        outer = self.scopes[-1]
        qname = f"{outer.qname}.{node.name}"
        bases: list[tuple[HeadKind, str, tuple[str, ...]]] = []
        for base in node.bases:
            found = _chain(base)
            if found is not None:
                kind, head = self._head(found[0][0])
                bases.append((kind, head, tuple(found[0][1:])))
        start = min([d.lineno for d in node.decorator_list] + [node.lineno])
        self._add(
            Symbol(
                qname,
                node.name,
                "class",
                self.facts.file,
                node.lineno,
                start,
                node.end_lineno or node.lineno,
                _class_signature(node),
                outer.qname,
                tuple(bases),
                _first_doc_line(node),
            )
        )
        self._bind_decorated(outer, node, qname)
        for base in node.bases:
            self._visit_expr_as(qname, base, "base")
        self._visit_with_owner(qname, iter(node.keywords))
        names = {
            t.id
            for stmt in node.body
            if isinstance(stmt, ast.Assign | ast.AnnAssign)
            for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
            if isinstance(t, ast.Name)
        }
        self.scopes.append(_Scope("class", qname, names))
        self._visit_with_owner(qname, iter(node.body))
        self.scopes.pop()

    def _visit_expr_as(self, owner: str, node: ast.expr, kind: RefKind) -> None:
        saved, self.owner = self.owner, owner
        target = node.func if isinstance(node, ast.Call) else node
        if not self._ref(target, kind):
            self.visit(target)
        if isinstance(node, ast.Call):
            for a in (*node.args, *node.keywords):
                self.visit(a)
        self.owner = saved

    def _assign_targets(self, targets: list[ast.expr], node: ast.stmt) -> None:
        scope = self.scopes[-1]
        if scope.kind not in ("module", "class"):
            return
        for t in targets:
            if not isinstance(t, ast.Name):
                continue
            qname = f"{scope.qname}.{t.id}"
            kind: SymbolKind = "variable" if scope.kind == "module" else "attribute"
            end = node.end_lineno or node.lineno
            self._add(
                Symbol(
                    qname,
                    t.id,
                    kind,
                    self.facts.file,
                    node.lineno,
                    node.lineno,
                    end,
                    ast.unparse(node).splitlines()[0][:160],
                    scope.qname,
                )
            )
            if scope.kind == "module":
                self.facts.bindings.setdefault(t.id, qname)

    def _owner_of_value(self, targets: list[ast.expr]) -> str:
        """A module or class variable's value is used by that variable (for blast radius)."""
        scope = self.scopes[-1]
        if (
            scope.kind in ("module", "class")
            and len(targets) == 1
            and isinstance(targets[0], ast.Name)
        ):
            return f"{scope.qname}.{targets[0].id}"
        return self.owner

    def _exported_names(self, node: ast.Assign | ast.AugAssign) -> None:
        """A module's `__all__ = ["f", ...]` (or `+=`) names its bindings: each string is a use of
        what it names (a rename must change it too, as language servers count it), of the kind
        an import is (a re-export, not a dependent)."""
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if self.scopes[-1].kind != "module" or not any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in targets
        ):
            return
        if not isinstance(node.value, ast.List | ast.Tuple):
            return
        for item in node.value.elts:
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                spot = (item.lineno, item.col_offset + 1)  # inside the quote
                self.facts.refs.append(Ref("module", item.value, (), (spot,), self.owner, "import"))

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._exported_names(node)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        self._exported_names(node)
        self._assign_targets(node.targets, node)
        self._visit_with_owner(self._owner_of_value(node.targets), [node.value])
        for t in node.targets:
            self.visit(t)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._assign_targets([node.target], node)
        values = [node.annotation, *([node.value] if node.value is not None else [])]
        self._visit_with_owner(self._owner_of_value([node.target]), values)
        self.visit(node.target)

    # -- imports ------------------------------------------------------------------------------

    def _bind_import(self, name: str, target: str) -> None:
        scope = self.scopes[-1]
        if scope.kind == "function":
            scope.imports[name] = target
        elif scope.kind == "module":
            self.facts.bindings[name] = target

    def _import_ref(self, target: str, node: ast.stmt, name: ast.alias | None = None) -> None:
        """`name`: the imported name's own place, which is its use (`from m import (\n  x,\n)`
        puts x on a line of its own); the module's components stay on the statement."""
        parts = target.split(".")
        spots = [(node.lineno, node.col_offset) for _ in parts]
        if name is not None:
            spots[-1] = (name.lineno, name.col_offset)
        self.facts.refs.append(
            Ref("abs", parts[0], tuple(parts[1:]), tuple(spots), self.owner, "import")
        )

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self._bind_import(alias.asname, alias.name)
            else:
                top = alias.name.split(".")[0]
                self._bind_import(top, top)
            self._import_ref(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = self._absolute(node.module, node.level)
        for alias in node.names:
            if alias.name == "*":
                if self.scopes[-1].kind == "module":
                    self.facts.star_imports.append(base)
                self._import_ref(base, node)
                continue
            target = f"{base}.{alias.name}" if base else alias.name
            self._bind_import(alias.asname or alias.name, target)
            self._import_ref(target, node, alias)

    # -- uses ---------------------------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> None:
        if not self._ref(node.func, "call"):
            self.visit(node.func)
        for a in (*node.args, *node.keywords):
            self.visit(a)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        kind: RefKind = "load" if isinstance(node.ctx, ast.Load) else "store"
        if not self._ref(node, kind):
            self.visit(node.value)
            line = node.end_lineno or node.lineno
            col = (node.end_col_offset or 0) - len(node.attr)
            self.facts.refs.append(
                Ref("unknown", "", (node.attr,), ((line, col), (line, col)), self.owner, kind)
            )

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self._ref(node, "load")


def scan_source(source: str, module: str, file: str, is_package: bool) -> FileFacts:
    """The facts of one file's source (a file that does not parse has only its module symbol)."""
    facts = FileFacts(module, file, is_package)
    lines = source.count("\n") + 1
    try:
        tree = ast.parse(source, filename=file)
    except (SyntaxError, ValueError) as exc:
        where = f"{file}:{getattr(exc, 'lineno', 1) or 1}"
        facts.syntax_error = f"{where}: syntax error: {getattr(exc, 'msg', str(exc))}"
        facts.symbols.append(Symbol(module, module.rpartition(".")[2], "module", file, 1, 1, lines))
        return facts
    name = module.rpartition(".")[2]
    doc = _first_doc_line(tree)
    facts.symbols.append(Symbol(module, name, "module", file, 1, 1, lines, "", None, (), doc))
    _Scanner(facts).visit(tree)
    return facts
