"""One exception root in the agent: every exception class `openmono` defines or raises is an
`OpenMonoError`, so a surface catches that one type (`openmono.errors`).

Every module is imported and read with `ast`: the classes it defines, and what each `raise` names
(a class, resolved in the module's globals; a raise of an instance or of a factory's result is
judged by the class that instance has, which the first rule already covers). The exceptions from
that rule are protocols of the libraries we use, each named below with its reason.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import click
import pytest
from openmono.errors import OpenMonoError

ROOT = Path(__file__).resolve().parents[2] / "agent/src/openmono"
VALIDATORS = {"field_validator", "model_validator", "validator", "root_validator"}
# (exception, where it may be raised, why it is not ours)
PROTOCOLS: list[tuple[type[BaseException], str, str]] = [
    (NotImplementedError, "openmono.", "marks a method a subclass must provide"),
    (SystemExit, "openmono.", "ends the process with an exit code"),
    (click.ClickException, "openmono.cli.", "click's own way to end a command with a message"),
    (AssertionError, "openmono.", "marks a line that cannot be reached"),
]


def _modules() -> Iterator[tuple[str, Path]]:
    """Every module of the agent but `__main__` (importing it runs the CLI)."""
    for path in sorted(ROOT.rglob("*.py")):
        if path.name == "__main__.py":
            continue
        parts = path.relative_to(ROOT).with_suffix("").parts
        names = parts[:-1] if parts[-1] == "__init__" else parts
        yield ".".join(("openmono", *names)), path


def _raises(tree: ast.AST) -> Iterator[tuple[ast.expr, bool]]:
    """Each raised expression, and whether it sits in a pydantic validator (whose contract is
    to raise ValueError: pydantic turns it into a ValidationError naming the field)."""

    def decorated(node: ast.AST) -> bool:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return False
        for deco in node.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if name in VALIDATORS:
                return True
        return False

    def walk(node: ast.AST, in_validator: bool) -> Iterator[tuple[ast.expr, bool]]:
        for child in ast.iter_child_nodes(node):
            inside = in_validator or decorated(child)
            if isinstance(child, ast.Raise) and child.exc is not None:
                yield child.exc, inside
            yield from walk(child, inside)

    yield from walk(tree, False)


def _resolve(module: ModuleType, expr: ast.expr) -> object:
    """What a raise names in `module`: `X(...)`, `X`, `a.b.X(...)`; None for anything else."""
    target = expr.func if isinstance(expr, ast.Call) else expr
    chain: list[str] = []
    while isinstance(target, ast.Attribute):
        chain.insert(0, target.attr)
        target = target.value
    if not isinstance(target, ast.Name):
        return None
    value: object = vars(module).get(target.id)
    for attr in chain:
        value = getattr(value, attr, None)
    return value


def _allowed(cls: type[BaseException], module: str, in_validator: bool) -> bool:
    if issubclass(cls, OpenMonoError):
        return True
    if in_validator and cls is ValueError:
        return True
    return any(issubclass(cls, exc) and module.startswith(where) for exc, where, _ in PROTOCOLS)


def test_every_exception_class_the_agent_defines_is_an_openmono_error() -> None:
    stray = []
    for name, _ in _modules():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__ == name
                and not issubclass(value, OpenMonoError)
            ):
                stray.append(f"{name}.{value.__name__}")
    assert stray == []


def test_every_exception_the_agent_raises_is_an_openmono_error() -> None:
    stray, seen = [], 0
    for name, path in _modules():
        module = importlib.import_module(name)
        for expr, in_validator in _raises(ast.parse(path.read_text())):
            cls = _resolve(module, expr)
            if not (isinstance(cls, type) and issubclass(cls, BaseException)):
                continue
            seen += 1
            if not _allowed(cls, name, in_validator):
                stray.append(f"{name}:{expr.lineno}: raise {cls.__name__}")
    assert stray == []
    assert seen > 100  # the scan does see the agent's raises


def test_the_rules_catch_what_they_should() -> None:
    module = ModuleType("openmono.fake")
    module.ValueError = ValueError  # type: ignore[attr-defined]
    source = (
        "def f():\n    raise ValueError('x')\n"
        "class M:\n    @field_validator('a')\n    def g(cls, v):\n        raise ValueError('y')\n"
    )
    found = [(_resolve(module, e), inside) for e, inside in _raises(ast.parse(source))]
    assert found == [(ValueError, False), (ValueError, True)]
    assert not _allowed(ValueError, "openmono.fake", False)
    assert _allowed(ValueError, "openmono.fake", True)
    assert not _allowed(click.ClickException, "openmono.loop._run", False)
    assert _allowed(click.UsageError, "openmono.cli._main", False)


@pytest.mark.parametrize(
    "name",
    ["ConfigError", "LLMError", "ExecutorError", "PermissionsError", "SessionError", "HookError",
     "McpClientError", "SubagentError", "PlaybookError", "AcpError", "StackError", "SetupError"],
)  # fmt: skip
def test_the_tree_in_the_docstring_is_the_tree_in_the_code(name: str) -> None:
    import openmono.errors

    assert f"── {name}" in (openmono.errors.__doc__ or "")
    classes = {
        value
        for module_name, _ in _modules()
        for value in vars(importlib.import_module(module_name)).values()
        if isinstance(value, type) and value.__name__ == name
    }
    (cls,) = classes
    assert cls.__bases__ == (OpenMonoError,)
