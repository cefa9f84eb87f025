"""Everything of a workspace that waits for the user's trust, gathered for one question.

Each package that loads something a repository brings says what of it waits (`openmono.config`:
the project file's settings; `openmono.playbooks`: project playbooks; `openmono.instructions`:
rules, skills, custom agents and commands); the surfaces ask one
question for all of it (`trust_question`), once per workspace, and `openmono config trust`
records the answer. What is gated asks `openmono.config.workspace_trusted`.
"""

from __future__ import annotations

from pathlib import Path

from openmono_contracts.facts import PROJECT_DIR

from openmono.config import ProjectTrustQuestion, project_trust_question
from openmono.instructions import waiting
from openmono.playbooks import project_playbooks


def waiting_parts(workspace: Path) -> list[tuple[str, list[str]]]:
    """What other packages than the settings found in `workspace` that waits, as (what, parts)."""
    found: list[tuple[str, list[str]]] = []
    playbooks = project_playbooks(workspace)
    if playbooks:
        names = ", ".join(p.name for p in playbooks)
        found.append((f"playbooks in {PROJECT_DIR}/playbooks ({names})", ["playbooks"]))
    brought = waiting(workspace)  # rules, skills, agents, commands (`openmono.instructions`)
    if brought:
        found.append(("; ".join(brought), ["instructions"]))
    return found


def trust_question(
    workspace: Path, *, even_if_answered: bool = False
) -> ProjectTrustQuestion | None:
    """The one question for `workspace` (None: nothing waits, or it was answered already)."""
    return project_trust_question(
        workspace, waiting_parts(workspace), even_if_answered=even_if_answered
    )
