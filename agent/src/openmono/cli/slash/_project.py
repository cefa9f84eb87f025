"""Project commands: /init (OPENMONO.md from a look at the project), /prompt (overrides), /map
(the repository map in the system prompt)."""

from __future__ import annotations

from pathlib import Path

from openmono_contracts.privatefs import write_private
from rich.markup import escape

from openmono.agent import (
    PROMPT_KINDS,
    PROMPT_SCOPES,
    PromptKind,
    PromptScope,
    default_base,
    prompt_file,
    prompt_override,
)
from openmono.cli.slash._survey import survey
from openmono.cli.slash._table import Surface, register

PROMPT_USAGE = (
    "usage: /prompt [show] · /prompt create|reset system|plan [project|global] · "
    "/prompt set system|plan [project|global] TEXT"
)


async def init(s: Surface, arg: str) -> None:
    path = s.workspace / "OPENMONO.md"
    if path.exists() and arg != "force":
        s.print(f"{escape(str(path))} exists; /init force writes it again")
        return
    text = survey(s.workspace)
    path.write_text(text)
    s.current.loop.refresh_system_prompt()
    s.markdown(text)
    s.print(f"[dim]wrote {escape(str(path))}; it is in the system prompt from now on[/dim]")


async def prompt(s: Surface, arg: str) -> None:
    words = arg.split(maxsplit=3)
    action = words[0] if words else "show"
    if action == "show":
        mode = s.current.loop.mode
        found = prompt_override(mode, s.settings.data_dir, s.workspace)
        where = f"override {found[1]}" if found else "built in"
        s.print(f"[dim]system prompt for mode {mode} ({escape(where)}):[/dim]")
        s.print(escape(s.current.loop.conv.system))
        return
    if action not in ("create", "set", "reset") or len(words) < 2 or words[1] not in PROMPT_KINDS:
        s.print(f"[red]{escape(PROMPT_USAGE)}[/red]")
        return
    kind: PromptKind = "plan" if words[1] == "plan" else "system"
    rest = words[2:]
    scope: PromptScope = "project"
    if rest and rest[0] in PROMPT_SCOPES:
        scope = "global" if rest[0] == "global" else "project"
        rest = rest[1:]
    path = prompt_file(kind, scope, s.settings.data_dir, s.workspace)
    if action == "reset":
        path.unlink(missing_ok=True)
        s.print(f"removed {escape(str(path))}")
    elif action == "create":
        if path.exists():
            s.print(f"{escape(str(path))} exists: edit it, or /prompt reset first")
            return
        _write_prompt(path, scope, default_base("plan" if kind == "plan" else "agent") + "\n")
        s.print(f"wrote {escape(str(path))}: edit it ({{workspace}} and {{mode}} are filled in)")
    else:
        text = " ".join(rest).strip()
        if not text:
            s.print(f"[red]{escape(PROMPT_USAGE)}[/red]")
            return
        _write_prompt(path, scope, text + "\n")
        s.print(f"{kind} prompt ({scope}) set in {escape(str(path))}")
    s.current.loop.refresh_system_prompt()


def _write_prompt(path: Path, scope: PromptScope, text: str) -> None:
    if scope == "global":  # in the data dir: 0700/0600 like the rest of it (privatefs)
        write_private(path, text)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


async def repo_map(s: Surface, arg: str) -> None:
    source = s.current.repomap
    if source is None:
        s.print("[dim]the repository map is off (repomap.tokens = 0)[/dim]")
        return
    await s.interruptible(s.current.refresh_map(arg))
    if source.error:
        s.print(f"[red]{escape(source.error)}[/red]")
    if not source.text:
        s.print("[dim]nothing to map: no source files the code graph reads here[/dim]")
        return
    s.print(f"[dim]repository map (budget {source.budget} tokens; /map TEXT ranks for TEXT):[/dim]")
    s.print(escape(source.text))


register("init", "write OPENMONO.md from a look at the project", init, arg_hint="[force]")
register("map", "show the repository map in the system prompt", repo_map, arg_hint="[text]")
register(
    "prompt",
    "show, create, set or reset the system or plan-mode prompt (project or global)",
    prompt,
    arg_hint="[show|create|set|reset] [system|plan] [project|global]",
)
