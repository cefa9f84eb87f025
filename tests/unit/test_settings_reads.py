"""No product module reads the process environment outside the settings modules (issue 29 item 3).

Parsed with `ast`, never run. A read is `os.environ` / `os.environb` / `os.getenv` (attribute or
`from os import ...`); a settings class (`BaseSettings`) reads it too. Both are allowed only in
the modules below, each with the reason it is one.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from openmono_worker import WorkerSettings

from tests.support.product import product_modules

# module -> why it may read the process environment
SETTINGS_MODULES = {
    "openmono.config._environ": "the agent's one reader of the environment and the env file",
    "openmono.config._settings": "the agent's settings class (its sources are _environ's)",
    "openmono.stack.settings": "the native stack's settings class (its sources are _environ's)",
    "openmono.stack.router": "the LLM router's settings class (a service of its own, compose too)",
    "openmono_worker.settings": "the tool worker's settings class",
    "openmono_scrape.settings": "the scrape service's settings class",
    "openmono_keys.settings": "the key service's settings class",
    "openmono_contracts.userenv": "the environment of a user's own commands (a scrubbed copy)",
}
_READS = {"environ", "environb", "getenv"}


def reads(source: str) -> list[str]:
    """What in `source` reads the process environment, one description per finding."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in _READS
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
        ):
            found.append(f"{node.lineno}: os.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "posix"):
            found += [
                f"{node.lineno}: from os import {a.name}" for a in node.names if a.name in _READS
            ]
        elif isinstance(node, ast.ClassDef) and any(
            (isinstance(b, ast.Name) and b.id == "BaseSettings")
            or (isinstance(b, ast.Attribute) and b.attr == "BaseSettings")
            for b in node.bases
        ):
            found.append(f"{node.lineno}: class {node.name}(BaseSettings)")
    return found


def _modules() -> Iterator[tuple[str, Path]]:
    return ((module, path) for module, _, path in product_modules())


def test_no_product_module_reads_the_environment_outside_the_settings_modules() -> None:
    found = [
        f"{module}:{read}"
        for module, path in _modules()
        if module not in SETTINGS_MODULES
        for read in reads(path.read_text())
    ]
    assert found == []


def test_every_settings_module_exists_and_the_rule_catches_reads() -> None:
    known = dict(_modules())
    assert set(SETTINGS_MODULES) <= set(known)
    assert reads("import os\nx = os.environ.get('A')\n") == ["2: os.environ"]
    assert reads("import os\nos.getenv('A')\n") == ["2: os.getenv"]
    assert reads("from os import environ\n") == ["1: from os import environ"]
    assert reads("class S(BaseSettings):\n    pass\n") == ["1: class S(BaseSettings)"]
    assert reads("import os\nos.killpg(1, 9)\n") == []


def test_the_code_tools_settings_are_a_section_of_the_workers_under_their_old_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WORKER_CODEINTEL_EDIT_WAIT_S", "1.5")
    monkeypatch.setenv("WORKER_CODEINTEL_MAX_SERVERS", "2")
    section = WorkerSettings().codeintel
    assert (section.edit_wait_s, section.max_servers) == (1.5, 2)
