"""The product packages as source files, for the tests that read them with `ast` (never run)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    "openmono": ROOT / "agent/src/openmono",
    "openmono_worker": ROOT / "services/worker/src/openmono_worker",
    "openmono_contracts": ROOT / "services/contracts/src/openmono_contracts",
    "openmono_keys": ROOT / "services/keys/src/openmono_keys",
    "openmono_scrape": ROOT / "scrapling/src/openmono_scrape",
}


def product_modules() -> Iterator[tuple[str, bool, Path]]:
    """Every module: its dotted name, whether it is a package's `__init__`, its file."""
    for top, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            names = parts[:-1] if is_package else parts
            yield ".".join((top, *names)), is_package, path
