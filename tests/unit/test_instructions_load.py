"""Loading what repositories say for agents (tests/fixtures/instructions): rules and how they
activate, notes, skills, custom agents and commands, trust, and the bad input of issue 38 (one
warning per malformed file, files over 256 KiB cut, links out of the workspace, two skills of
one name, a glob that matches nothing)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from openmono.instructions import (
    Instructions,
    prepare,
    prompt_blocks,
    rules_report,
    skills_report,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "instructions"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def copy(name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURES / name, tmp_path / name, symlinks=True))


def load(
    ws: Path, tmp_path: Path, *, trusted: bool = True, home: Path | None = None
) -> Instructions:
    return Instructions.load(ws, tmp_path / "data", home or tmp_path / "home", trusted=trusted)


def test_cursor_rules_activate_by_their_front_matter(tmp_path: Path) -> None:
    ws = copy("cursor", tmp_path)
    ins = load(ws, tmp_path)
    kinds = {r.name: r.activation for r in ins.rules}
    assert kinds == {
        "general": "always",
        "go-style": "glob",
        "react": "glob",
        "migrations": "requested",
        "release": "manual",
        "rust": "glob",
    }
    react = next(r for r in ins.rules if r.name == "react")
    assert react.globs == ("*.ts", "*.tsx", "web/**/*.{css,scss}")
    assert react.matches(ws / "web" / "app.tsx") and react.matches(ws / "deep" / "x.ts")
    assert react.matches(ws / "web" / "a" / "b.scss") and not react.matches(ws / "app.css")
    go = next(r for r in ins.rules if r.name == "go-style")
    assert go.matches(ws / "cmd" / "main.go") and go.matches(ws / "main.go")
    system = "\n\n".join(prompt_blocks(ins, 32768))
    assert "Answer in English." in system  # always: in the prompt
    assert "migrations: How to write a database migration" in system  # requested: listed
    for absent in ("fmt.Errorf", "Function components", "vMAJOR", "unwrap()"):
        assert absent not in system  # glob and manual rules cost nothing until they apply


def test_subfolder_rules_and_notes_apply_to_the_files_under_them(tmp_path: Path) -> None:
    ws = copy("cursor", tmp_path)
    ins = load(ws, tmp_path)
    handler = (ws / "services" / "api" / "handlers" / "get.go").resolve()
    names = [getattr(i, "name", None) for i in ins.applicable(handler)]
    # the subfolder's always rule and its glob rule (relative to services/api), the root's go rule
    assert names == ["api-always", "api-errors", "go-style"]
    assert [
        getattr(i, "name", None) for i in ins.applicable((ws / "cmd" / "main.go").resolve())
    ] == ["go-style"]
    claude = copy("claude", tmp_path)
    ins = load(claude, tmp_path)
    found = ins.applicable((claude / "src" / "api" / "items.py").resolve())
    assert [getattr(i, "label", getattr(i, "name", "")) for i in found] == [
        "src/api/CLAUDE.md",
        "api",
    ]


def test_claude_code_layout(tmp_path: Path) -> None:
    ws = copy("claude", tmp_path)
    ins = load(ws, tmp_path)
    assert {r.name: r.activation for r in ins.rules} == {
        "api": "glob",
        "style": "always",
        "testing": "glob",
    }
    system = "\n\n".join(prompt_blocks(ins, 32768))
    assert system.index("# Project notes (CLAUDE.md)") < system.index("(CLAUDE.local.md)")
    assert "no bare `except:`" in system and "pytest fixtures" not in system
    reviewer = ins.agents["reviewer"]
    assert reviewer.tools == ("FileRead", "Grep", "Glob", "Bash")
    assert reviewer.model is None and reviewer.max_turns == 8  # `sonnet` means the parent's
    assert "Do not edit anything." in reviewer.instructions
    assert set(ins.commands) == {"review-pr", "changelog"}
    expanded = ins.commands["review-pr"].expand('42 "error handling"')
    assert expanded.startswith(
        "Review pull request #42 of this repository, focusing on error handling."
    )
    assert expanded.endswith('Everything the user said: 42 "error handling"')
    assert ins.commands["changelog"].expand("v2").endswith("\n\nARGUMENTS: v2")


def test_root_notes_all_of_them_nearest_first_and_once(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "OPENMONO.md").write_text("ours")
    (ws / "AGENTS.md").write_text("shared")
    (ws / "CLAUDE.md").symlink_to("AGENTS.md")  # the same file twice
    (ws / "CLAUDE.local.md").write_text("mine")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "OPENMONO.md").write_text("the user's")
    notes, _ = load(ws, tmp_path).notes()
    assert [n.text for n in notes] == ["ours", "shared", "mine", "the user's"]


def test_an_untrusted_project_gives_notes_only(tmp_path: Path, home: Path) -> None:
    ws = copy("claude", tmp_path)
    (home / ".agents" / "skills" / "mine").mkdir(parents=True)
    (home / ".agents" / "skills" / "mine" / "SKILL.md").write_text(
        "---\nname: mine\ndescription: The user's own skill.\n---\nDo it my way."
    )
    (tmp_path / "data" / "rules").mkdir(parents=True)
    (tmp_path / "data" / "rules" / "me.md").write_text("I like short answers.")
    ins = load(ws, tmp_path, trusted=False, home=home)
    assert [r.name for r in ins.rules] == ["me"]  # the user's rules only
    assert list(ins.skills.skills) == ["mine"]
    assert ins.agents == {} and ins.commands == {}
    assert ins.folder((ws / "src" / "api").resolve()).notes  # notes need no trust
    assert ins.untrusted == [
        "rules in .claude/rules",
        "1 skills in .claude/skills",
        "1 agents in .claude/agents",
        "2 commands in .claude/commands",
    ]
    assert "The project is not trusted" in rules_report(ins)
    assert "openmono config trust" in skills_report(ins)
    assert "Shop" in "\n".join(prompt_blocks(ins, 32768))


def test_malformed_front_matter_is_one_warning_and_the_rest_loads(tmp_path: Path) -> None:
    ws = copy("cursor", tmp_path)
    (ws / ".cursor" / "rules" / "broken.mdc").write_text(
        "---\ndescription: broken\nglobs: **/*.py\nnot a field line\n---\nbody"
    )
    ins = load(ws, tmp_path)
    assert "broken" not in {r.name for r in ins.rules} and len(ins.rules) == 6
    report = rules_report(ins)
    assert report.count("broken.mdc") == 1
    assert ".cursor/rules/broken.mdc:4: malformed front matter: expected `key: value`" in report


def test_a_file_over_256_kib_is_cut_with_a_note(tmp_path: Path) -> None:
    ws = copy("claude", tmp_path)
    big = ws / ".claude" / "rules" / "big.md"
    big.write_text("# Big\n" + "x" * 80 + "\n" + ("word " * 80_000))
    ins = load(ws, tmp_path)
    rule = next(r for r in ins.rules if r.name == "big")
    assert rule.cut and rule.body.endswith("[... cut here: the file is over 256 KiB]")
    assert len(rule.body.encode()) < 256 * 1024 + 100
    assert "big.md: over 256 KiB: cut" in rules_report(ins)


def test_a_link_out_of_the_workspace_is_not_read(tmp_path: Path) -> None:
    ws = copy("claude", tmp_path)
    secret = tmp_path / "secret.md"
    secret.write_text("the user's private notes")
    (ws / ".claude" / "rules" / "leak.md").symlink_to(secret)
    (ws / "AGENTS.md").symlink_to(secret)
    (ws / ".claude" / "skills" / "leak").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "SKILL.md").write_text("---\ndescription: leak\n---\nsecret")
    ins = load(ws, tmp_path)
    assert "leak" not in {r.name for r in ins.rules} and "leak" not in ins.skills.skills
    notes, problems = ins.notes()
    assert all("private" not in n.text for n in notes)
    assert any("a symbolic link out of the workspace" in p.message for p in problems)
    assert "leak.md: a symbolic link out of the workspace" in rules_report(ins)
    assert "leak/SKILL.md: a symbolic link out of the workspace" in skills_report(ins)
    assert "private" not in "\n".join(prompt_blocks(ins, 32768))


def test_two_skills_of_one_name_the_later_folder_wins(tmp_path: Path, home: Path) -> None:
    ws = copy("agentskills", tmp_path)
    user = home / ".claude" / "skills" / "review"
    user.mkdir(parents=True)
    (user / "SKILL.md").write_text("---\nname: review\ndescription: The user's review.\n---\nmine")
    ins = load(ws, tmp_path, home=home)
    # ~/.agents < .agents < ~/.claude < .claude < ~/.openmono < .openmono
    assert ins.skills.skills["review"].folder == ws / ".openmono" / "skills" / "review"
    report = skills_report(ins)
    assert (
        "hides the skill in .agents/skills/review, the skill in ~/.claude/skills/review" in report
    )
    assert "no-description/SKILL.md: no `description`" in report
    assert set(ins.skills.skills) == {"pdf-tools", "review"}


def test_a_glob_that_matches_nothing_is_said_in_rules(tmp_path: Path) -> None:
    ins = load(copy("cursor", tmp_path), tmp_path)
    lines = {
        line.split("**")[1]: line
        for line in rules_report(ins).splitlines()
        if line.startswith("- **")
    }
    assert "match no file" in lines["rust"]
    assert "match no file" not in lines["go-style"] and "match no file" not in lines["react"]


def test_only_the_first_rule_folder_of_the_chain_is_read(tmp_path: Path) -> None:
    ws = copy("cursor", tmp_path)
    (ws / ".claude" / "rules").mkdir(parents=True)
    (ws / ".claude" / "rules" / "other.md").write_text("from claude")
    (ws / ".agents" / "rules").mkdir(parents=True)
    (ws / ".agents" / "rules" / "first.md").write_text("from .agents")
    ins = load(ws, tmp_path)
    assert [r.name for r in ins.rules] == ["first"]
    report = rules_report(ins)
    assert "Read from .agents/rules." in report
    assert "Not read: .cursor/rules" in report and "Not read: .claude/rules" in report


def test_skill_index_stays_within_its_budget(tmp_path: Path) -> None:
    from openmono.instructions import estimate_tokens, skill_index

    ws = tmp_path / "ws"
    for i in range(50):
        folder = ws / ".agents" / "skills" / f"skill-{i:02d}"
        folder.mkdir(parents=True)
        words = " ".join(f"word{i}x{j}" for j in range(60))
        (folder / "SKILL.md").write_text(f"---\ndescription: Does task {i}. {words}\n---\nbody")
    skills = list(load(ws, tmp_path).skills.skills.values())
    whole = skill_index(skills, 100_000)
    assert whole is not None and "word0x59" in whole
    for budget in (1500, 600, 200):
        index = skill_index(skills, budget)
        assert index is not None and estimate_tokens(index) <= budget
    assert "- skill-49:" in (skill_index(skills, 1500) or "")  # all 50 named, descriptions cut
    assert "more: /skills lists them" in (skill_index(skills, 200) or "")


def test_user_invocation_and_mentions(tmp_path: Path) -> None:
    ws = copy("claude", tmp_path)
    ins = load(ws, tmp_path)
    skill = prepare(ins, "/deploy staging")
    assert skill.prompt is not None and skill.skill == "deploy"
    assert "Run `scripts/deploy.sh staging` from this skill's folder." in skill.prompt
    assert (
        "Skill folder: .claude/skills/deploy" in skill.prompt
        and "scripts/deploy.sh" in skill.prompt
    )
    command = prepare(ins, "/review-pr 7 tests")
    assert command.prompt is not None and command.prompt.startswith("Review pull request #7")
    listing = prepare(ins, "/skills")
    assert listing.prompt is None and listing.reply is not None and "/review-pr" in listing.reply
    assert prepare(ins, "/unknown thing").prompt == "/unknown thing"
    mention = prepare(ins, "fix the handler, see @api, mail me@api.example")
    assert mention.prompt is not None and mention.prompt.count("pydantic model") == 1
    assert mention.notices == ("@api: the rule .claude/rules/backend/api.md",)


def test_the_home_as_workspace_keeps_the_users_own_skills(tmp_path: Path) -> None:
    home = tmp_path / "home"
    skill = home / ".claude" / "skills" / "mine"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\ndescription: The user's own.\n---\nbody")
    ins = load(home, tmp_path, trusted=False, home=home)
    assert list(ins.skills.skills) == ["mine"] and ins.untrusted == []


def test_a_realistic_repository_modelled_on_a_public_one(tmp_path: Path) -> None:
    """tests/fixtures/instructions/wordpress-plugin: AGENTS.md and CLAUDE.md, Cursor's always
    rules with empty `description:`/`globs:`, Claude Code skills and an agent, `.agents/skills`."""
    ws = copy("wordpress-plugin", tmp_path)
    ins = load(ws, tmp_path)
    system = "\n\n".join(prompt_blocks(ins, 8192))
    assert system.index("(AGENTS.md)") < system.index("(CLAUDE.md)")
    assert "Always answer in English." in system and "$wpdb->prepare()" in system
    assert [r.activation for r in ins.rules] == ["always", "always"]
    assert ins.skills.skills["dev"].folder == ws / ".claude" / "skills" / "dev"  # hides .agents'
    assert not ins.skills.skills["code-style"].user_invocable
    assert "- code-style: PHP code style" in system  # the model may still load it
    review = ins.agents["code-review"]
    assert review.tools == ("Bash", "FileRead", "Glob", "Grep") and review.model is None
    assert review.skills == ("code-style", "test")
    assert prepare(ins, "/code-style").prompt == "/code-style"  # not a slash command
    assert "hides the skill in .agents/skills/dev" in skills_report(ins)


def test_a_custom_agent_type_gets_its_tools_and_skills(tmp_path: Path) -> None:
    from openmono.agent._instructions import custom_type
    from openmono.loop import worker_tools

    ins = load(copy("wordpress-plugin", tmp_path), tmp_path)
    kind = custom_type(ins.agents["code-review"], ins)
    assert kind.instructions.startswith("You review changes to this plugin.")
    assert "Namespaces under" in kind.instructions and "WP_UnitTestCase" in kind.instructions
    parent = {name: tool.facts for name, tool in worker_tools().items()}
    assert sorted(kind.select(parent)) == ["Bash", "FileRead", "Glob", "Grep"]
    assert kind.mode == "agent" and kind.max_turns == 20
