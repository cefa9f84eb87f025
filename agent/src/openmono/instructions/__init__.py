"""What a repository (and its user) already says about working in it, in other agents' formats.

    ins = Instructions.load(workspace, data_dir, home, trusted=True)
    prompt_blocks(ins, n_ctx)              # notes, always rules, the skills index
    prepare(ins, "/review 42 @go-style")   # a user's message: /skill, /command, @rule resolved

Sources (each module's docstring has the details):
- notes (`_notes`): `OPENMONO.md`, `AGENTS.md`, `CLAUDE.md`, `CLAUDE.local.md` at the root and
  the user's `OPENMONO.md`, in the prompt; `AGENTS.md`/`CLAUDE.md` of subfolders ride in results
- rules (`_rules`): `.openmono/rules`, `.agents/rules`, `.cursor/rules`, `.claude/rules` (the
  first that holds one), Cursor's `.mdc` and Claude Code's `.md`; the user's `<data dir>/rules`
- skills (`_skills`, `_tool`): Agent Skills folders; an index in the prompt, `Skill` loads one
- custom agents (`_agents`) for the `Agent` tool, custom slash commands (`_commands`)
Riding in results (`_attach`): a toolset wrapper adds what applies to the files a call touched,
once per conversation until a compaction. Trust (`_catalog`): a project the user has not
trusted contributes notes only. `/rules` and `/skills` (`_report`) say what is active and why.
"""

from openmono.instructions._agents import CustomAgent
from openmono.instructions._attach import Attachments, WithInstructions
from openmono.instructions._catalog import Folder, Instructions, waiting
from openmono.instructions._commands import CustomCommand
from openmono.instructions._errors import FrontMatterError, InstructionsError
from openmono.instructions._files import MAX_BYTES, Problem
from openmono.instructions._frontmatter import Document, parse
from openmono.instructions._notes import Note
from openmono.instructions._prepare import Prepared, prepare, slash_target
from openmono.instructions._prompt import prompt_blocks, skills_budget
from openmono.instructions._report import rules_report, skills_report
from openmono.instructions._rules import RULE_DIRS, Rule
from openmono.instructions._skills import (
    Skill,
    SkillSet,
    estimate_tokens,
    skill_content,
    skill_index,
)
from openmono.instructions._tool import NAME, SkillTool

__all__ = [
    "MAX_BYTES",
    "NAME",
    "RULE_DIRS",
    "Attachments",
    "CustomAgent",
    "CustomCommand",
    "Document",
    "Folder",
    "FrontMatterError",
    "Instructions",
    "InstructionsError",
    "Note",
    "Prepared",
    "Problem",
    "Rule",
    "Skill",
    "SkillSet",
    "SkillTool",
    "WithInstructions",
    "estimate_tokens",
    "parse",
    "prepare",
    "prompt_blocks",
    "rules_report",
    "skill_content",
    "skill_index",
    "skills_budget",
    "skills_report",
    "slash_target",
    "waiting",
]
