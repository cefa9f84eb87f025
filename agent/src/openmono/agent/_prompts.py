"""Prompt overrides: the user's own base instructions, for every mode or for plan mode alone.

    <data dir>/prompts/system.md            global: every project
    <data dir>/prompts/plan.md              global: plan mode
    <workspace>/.openmono/prompts/*.md      the project's, which win over the global ones

A file is a template: `{workspace}` and `{mode}` are filled in. Project notes, memory and git state
are still appended after it. `/prompt` shows, creates and removes these files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from openmono_contracts.facts import PROJECT_DIR

PromptKind = Literal["system", "plan"]
PromptScope = Literal["global", "project"]
PROMPT_KINDS: tuple[PromptKind, ...] = ("system", "plan")
PROMPT_SCOPES: tuple[PromptScope, ...] = ("project", "global")


def prompt_file(kind: PromptKind, scope: PromptScope, data_dir: Path, workspace: Path) -> Path:
    root = workspace / PROJECT_DIR if scope == "project" else data_dir
    return root / "prompts" / f"{kind}.md"


def prompt_override(mode: str, data_dir: Path, workspace: Path) -> tuple[str, Path] | None:
    """The override in force for `mode` (its text and file), or None for ours.

    Plan mode looks for a plan prompt first, then a system prompt; other modes for a system prompt.
    """
    kinds: tuple[PromptKind, ...] = ("plan", "system") if mode == "plan" else ("system",)
    for kind in kinds:
        for scope in PROMPT_SCOPES:
            path = prompt_file(kind, scope, data_dir, workspace)
            try:
                text = path.read_text(errors="replace") if path.is_file() else ""
            except OSError:
                continue
            if text.strip():
                return text, path
    return None
