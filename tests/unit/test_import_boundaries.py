"""Packages use each other through public names only (STYLE.md §1): parsed with `ast`, never run.

Rules over the product packages:
1. No module imports a private (`_name`) module or name of another package; a package's own
   private modules are its business (`openmono.cli._main` may use `openmono.cli._options`, but
   `openmono.acp` may not).
2. The agent uses the worker only through `openmono_worker.__all__` (no `openmono_worker.tools`,
   `.callstate`, ...): protocol both sides share lives in `openmono_contracts`. Likewise the rest
   of the agent uses `openmono.stack` through its face (`openmono.stack.__all__`), whose modules
   keep public names because the stack runs one of them as a process (`llama_server`).
3. No circles: between the agent's subpackages, and between the modules of each top-level
   package. Every import counts, also one made for type checking only, inside a function, or by
   name (`importlib.import_module("a.b")`): a circle hidden that way is still two modules that
   cannot be read (or changed) one at a time.
4. `openmono_contracts` is below every service: it imports no other product package, no queue
   or store client and no web framework, so what runs a service (the crawl engine once lived
   there, with its Redis store) cannot grow back into it; its crawl module holds wire models
   and names only.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator
from pathlib import Path

import openmono_worker
from openmono import stack as native_stack
from openmono_contracts import crawl as crawl_wire
from pydantic import BaseModel

from tests.support.product import PACKAGES, product_modules

# Packages used from outside only through the names of their `__all__`.
FACES = {
    "openmono_worker": set(openmono_worker.__all__),
    "openmono.stack": set(native_stack.__all__),
}


def _imported(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every absolute dotted name a module imports: modules, and `module.name` for from-imports."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"


def _private_owner(dotted: str) -> str | None:
    """The package whose private part `dotted` reaches into (None: only public parts)."""
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def violations(module: str, is_package: bool, source: str) -> list[str]:
    """What `module` (its dotted name) imports that it should not, one line each."""
    own = module if is_package else module.rpartition(".")[0]
    found = []
    for line, dotted in _imported(ast.parse(source)):
        if dotted.split(".")[0] not in PACKAGES:
            continue
        owner = _private_owner(dotted)
        if owner is not None and owner != own:
            found.append(f"{module}:{line}: {dotted} is private to {owner}")
        for face, names in FACES.items():
            if module == face or module.startswith(f"{face}.") or not module.startswith("openmono"):
                continue
            if dotted.startswith(f"{face}."):
                head, _, name = dotted.removeprefix(f"{face}.").partition(".")
                if name or head not in names:
                    found.append(f"{module}:{line}: {dotted} is not in {face}.__all__")
    return found


def _modules() -> Iterator[tuple[str, bool, Path]]:
    return product_modules()


def test_no_package_imports_another_packages_private_names() -> None:
    found = [v for m, pkg, path in _modules() for v in violations(m, pkg, path.read_text())]
    assert found == []


def test_the_rules_catch_what_they_should() -> None:
    assert violations("openmono.acp._stdio", False, "from openmono.cli._options import X") == [
        "openmono.acp._stdio:1: openmono.cli._options is private to openmono.cli",
        "openmono.acp._stdio:1: openmono.cli._options.X is private to openmono.cli",
    ]
    assert violations("openmono.cli._main", False, "from openmono.cli._options import X") == []
    assert violations("openmono.cli", True, "from openmono.cli._main import main") == []
    assert violations("openmono.loop.x", False, "from openmono.llm import _helper") != []
    assert violations("openmono.loop", True, "def f():\n    import openmono.llm._sse\n") != []
    assert violations("openmono.executor.c", False, "from openmono_worker.callstate import a") != []
    assert violations("openmono.executor.c", False, "from openmono_worker import nothing") != []
    assert violations("openmono.executor.c", False, "from openmono_worker import get_tool") == []
    assert violations("openmono_worker.x", False, "from openmono_worker.tools import Tool") == []
    assert violations("openmono.cli.x", False, "from openmono.stack.runner import up") != []
    assert violations("openmono.cli.x", False, "from openmono.stack import up") == []
    assert violations("openmono.stack.runner", False, "from openmono.stack.tls import x") == []


def _subpackage_graph() -> dict[str, set[str]]:
    """`openmono` subpackage → the other subpackages it imports (lazy imports included)."""
    graph: dict[str, set[str]] = {}
    for module, is_package, path in _modules():
        parts = module.split(".")
        if parts[0] != "openmono" or len(parts) < 2 + (not is_package):
            continue
        own = parts[1]
        for _, dotted in _imported(ast.parse(path.read_text())):
            target = dotted.split(".")
            if target[0] == "openmono" and len(target) > 1 and target[1] != own:
                graph.setdefault(own, set()).add(target[1])
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for nxt in sorted(graph.get(node, ())):
            found = visit(nxt, [*path, node])
            if found:
                return found
        done.add(node)
        return None

    return next((c for n in sorted(graph) if (c := visit(n, []))), None)


def test_agent_subpackages_import_each_other_without_a_circle() -> None:
    # Session assembly (openmono.agent) sits above loop, mcp, hooks and subagents; the loop knows
    # only its extension points. A circle here is what issue 12 removed (loop -> mcp -> loop).
    graph = _subpackage_graph()
    assert "loop" in graph and "agent" in graph["cli"]
    assert not graph["loop"] & {"agent", "mcp", "subagents", "hooks", "acp", "cli"}
    assert _cycle(graph) is None
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def _by_name(node: ast.AST) -> str | None:
    """The module an `importlib.import_module("a.b")` (or `__import__("a.b")`) call names."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    first = node.args[0]
    if called in ("import_module", "__import__") and isinstance(first, ast.Constant):
        return first.value if isinstance(first.value, str) else None
    return None


def _module_imports(
    module: str, is_package: bool, tree: ast.AST, modules: set[str]
) -> Iterator[str]:
    """Every module of `modules` that `module` imports, relative imports made absolute;
    `from a import b` names `a.b` when that is a module, else `a`."""
    here = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if (named := _by_name(node)) is not None and named in modules:
            yield named
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = here[: len(here) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in modules:
                    yield full
                elif base in modules:
                    yield base


def _module_graphs() -> dict[str, dict[str, set[str]]]:
    """Per top-level package: module -> the other modules of that package it imports."""
    found = list(_modules())
    names = {module for module, _, _ in found}
    graphs: dict[str, dict[str, set[str]]] = {top: {} for top in PACKAGES}
    for module, is_package, path in found:
        top = module.split(".")[0]
        for name in _module_imports(module, is_package, ast.parse(path.read_text()), names):
            if name != module and name.split(".")[0] == top:
                graphs[top].setdefault(module, set()).add(name)
    return graphs


def test_no_import_circle_between_the_modules_of_a_package() -> None:
    graphs = _module_graphs()
    assert "openmono.loop._prepare" in graphs["openmono"]["openmono.loop._dispatch"]
    circles = {top: _cycle(graph) for top, graph in graphs.items()}
    assert circles == dict.fromkeys(PACKAGES)


def test_the_circle_rule_sees_type_checking_lazy_and_relative_imports() -> None:
    typing_only = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._b import B\n"
    lazy = "def f():\n    from openmono.x import _a\n"
    known = {"openmono.x", "openmono.x._a", "openmono.x._b", "p", "p.other"}
    a = set(_module_imports("openmono.x._a", False, ast.parse(typing_only), known))
    b = set(_module_imports("openmono.x._b", False, ast.parse(lazy), known))
    assert a == {"openmono.x._b"} and b == {"openmono.x._a"}
    assert _cycle({"openmono.x._a": a, "openmono.x._b": b}) is not None
    up = set(_module_imports("p.sub.mod", False, ast.parse("from .. import other"), known))
    assert up == {"p.other"}
    by_name = "import importlib\ndef f():\n    return importlib.import_module('openmono.x._a')\n"
    assert set(_module_imports("p.other", False, ast.parse(by_name), known)) == {"openmono.x._a"}


# What a service runs on; contracts only describes what crosses between them.
_NOT_IN_CONTRACTS = {"celery", "kombu", "redis", "fastapi", "starlette", "uvicorn"}


def contracts_violations(module: str, source: str) -> list[str]:
    found = []
    for line, dotted in _imported(ast.parse(source)):
        top = dotted.split(".")[0]
        if top in _NOT_IN_CONTRACTS or (top in PACKAGES and top != "openmono_contracts"):
            found.append(f"{module}:{line}: contracts may not import {top}")
    return sorted(set(found))


def test_contracts_imports_no_service_and_no_runtime_of_one() -> None:
    found = [
        v
        for module, _, path in _modules()
        if module.split(".")[0] == "openmono_contracts"
        for v in contracts_violations(module, path.read_text())
    ]
    assert found == []
    assert contracts_violations("openmono_contracts.x", "import redis.asyncio") != []
    assert contracts_violations("openmono_contracts.x", "from openmono_scrape import a") != []
    assert contracts_violations("openmono_contracts.x", "from pydantic import BaseModel") == []


def test_the_crawl_contract_is_wire_models_and_names_only() -> None:
    public = {n: v for n, v in vars(crawl_wire).items() if not n.startswith("_")}
    behaviour = [
        name
        for name, value in public.items()
        if (inspect.isfunction(value) or inspect.isclass(value))
        and str(getattr(value, "__module__", "")).startswith("openmono_contracts")
        and not (inspect.isclass(value) and issubclass(value, BaseModel))
    ]
    assert behaviour == []
    assert {"JobSpec", "SliceTask", "CRAWL_QUEUE", "CRAWL_TASK"} <= set(public)
