"""What the instructions put in the system prompt: three blocks, after our base instructions.

    # Project notes (NAME)   each root note (`_notes`), within `MAX_NOTES_CHARS` in all
    # Rules                  the always-apply rules of the root and the user, whole, within
                             `MAX_RULES_CHARS`; then one line per requested rule (its
                             description and where to read it)
    # Skills                 names and descriptions within a token budget (`_skills`)
Glob rules, manual rules and the notes of subfolders are not here: they cost nothing until a
tool touches a file they are about (`_attach`) or a message names them (`_prepare`).
"""

from __future__ import annotations

from openmono.instructions._catalog import Instructions
from openmono.instructions._notes import notes_block
from openmono.instructions._rules import Rule
from openmono.instructions._skills import skill_index

MAX_RULES_CHARS = 16_000
# The skills index: at most this many tokens, and at most this share of the context.
SKILLS_BUDGET_TOKENS = 1_500
SKILLS_BUDGET_SHARE = 0.1


def rule_text(rule: Rule, label: str, limit: int) -> str:
    body = rule.body if len(rule.body) <= limit else rule.body[:limit] + "\n[... cut: too long]"
    return f"## {rule.name} ({label})\n{body}"


def rules_block(ins: Instructions) -> str | None:
    parts: list[str] = []
    left = MAX_RULES_CHARS
    for rule in ins.always_rules():
        if left <= 0:
            parts.append(f"## {rule.name} ({ins.shown(rule.file)}): not shown, no room (/rules)")
            continue
        parts.append(rule_text(rule, ins.shown(rule.file), left))
        left -= len(rule.body)
    requested = ins.requested_rules()
    if requested:
        lines = [f"- {r.name}: {r.description} (read {ins.for_model(r.file)})" for r in requested]
        parts.append("Rules to read when they apply:\n" + "\n".join(lines))
    return "# Rules\n" + "\n\n".join(parts) if parts else None


def skills_budget(n_ctx: int) -> int:
    return min(SKILLS_BUDGET_TOKENS, int(n_ctx * SKILLS_BUDGET_SHARE))


def prompt_blocks(ins: Instructions, n_ctx: int) -> list[str]:
    """The blocks this session's system prompt gets (see the module docstring)."""
    notes, _ = ins.notes()
    blocks = [
        notes_block(notes),
        rules_block(ins),
        skill_index(list(ins.skills.skills.values()), skills_budget(n_ctx)),
    ]
    return [b for b in blocks if b]
