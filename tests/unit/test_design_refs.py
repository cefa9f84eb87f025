"""What the code cites as the design points somewhere: `docs/architecture.md`, a section it has.

The product once cited a `DESIGN.md` that is not in the repository; every citation now names
`docs/architecture.md §N`, and N must be one of its numbered sections (`## N.`).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "docs" / "architecture.md"
_CITED = re.compile(r"architecture\.md §(\d+)((?:, §\d+)*)")


def _tracked() -> list[Path]:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True, timeout=30
    )
    return [ROOT / name for name in listed.stdout.decode().split("\0") if name]


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""  # binary files, or a file deleted but not yet committed


def test_every_design_citation_names_a_section_of_the_architecture() -> None:
    sections = set(re.findall(r"^## (\d+)\.", DESIGN.read_text(), re.MULTILINE))
    ghosts, missing = [], []
    for path in _tracked():
        if path.suffix in {".png", ".gguf", ".pdf"} or path.name == Path(__file__).name:
            continue
        text = _text(path)
        if "DESIGN.md" in text:
            ghosts.append(str(path.relative_to(ROOT)))
        for first, more in _CITED.findall(text):
            cited = {first, *re.findall(r"\d+", more)}
            missing += [f"{path.relative_to(ROOT)}: §{n}" for n in sorted(cited - sections)]
    assert sections >= {"1", "3", "4", "5", "6", "7", "8", "9"}
    assert ghosts == [] and missing == []
