"""`openmono config show|get|set|path|trust`: the effective settings and where each came from,
and edits to one settings file."""

from __future__ import annotations

import json
from pathlib import Path

import click

from openmono.config import (
    ConfigError,
    RunOptions,
    current_environ,
    explain_agent,
    explain_plain,
    find_project_file,
    get_value,
    left_out_settings,
    record_project_trust,
    set_value,
    settings_file,
    user_settings_file,
)


@click.group()
def config() -> None:
    """Read and change settings (flags > environment > env file > settings files > defaults)."""


_SHOW_WIDTH = 64


@config.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def show(ctx: click.Context, as_json: bool) -> None:
    """Every resolved value (the agent's and the stack's), where it came from, secrets masked."""
    from openmono.stack import StackSettings

    opts: RunOptions = ctx.obj
    env = current_environ()
    try:
        _settings, agent = explain_agent(env, opts.workspace, opts.config, opts.overrides())
        stack = explain_plain(StackSettings(), env)
    except (ConfigError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    files = {
        "checkout": str(env.checkout) if env.checkout else f"- ({env.checkout_problem})",
        "env file": _state(env.file_path),
        "user file": _state(user_settings_file(env)),
        "project file": _state(find_project_file(opts.workspace, env)),
    }
    left = left_out_settings(opts.workspace, env)
    if as_json:
        out = {"agent": [r.__dict__ for r in agent], "stack": [r.__dict__ for r in stack]}
        click.echo(json.dumps({"files": files, "left_out": left, **out}, indent=2))
        return
    for label, where in files.items():
        click.echo(f"{label:<13} {where}")
    if left:
        click.echo(
            f"left out      {', '.join(left)} (the project is not trusted: `openmono config trust`)"
        )
    for title, rows in (
        ("agent (openmono, doctor, serve)", agent),
        ("stack (up, status, setup)", stack),
    ):
        click.echo(f"\n{title}")
        width = max(len(r.key) for r in rows)
        for row in rows:
            value = (
                row.value if len(row.value) <= _SHOW_WIDTH else row.value[: _SHOW_WIDTH - 1] + "…"
            )
            click.echo(f"  {row.key:<{width}}  {value:<{min(_SHOW_WIDTH, 30)}}  {row.origin}")


def _state(path: Path | None) -> str:
    if path is None:
        return "-"
    return f"{path} ({'present' if path.is_file() else 'absent'})"


@config.command()
@click.argument("key", required=False)
@click.option("--reveal", is_flag=True, help="Show secrets instead of ********.")
@click.pass_context
def get(ctx: click.Context, key: str | None, reveal: bool) -> None:
    """Print the effective value of KEY (dotted, e.g. llm.endpoint), or everything."""
    opts: RunOptions = ctx.obj
    value: object
    try:
        settings = opts.settings()
        if key is None:
            value = {k: get_value(settings, k, reveal) for k in type(settings).model_fields}
        else:
            value = get_value(settings, key, reveal)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(value if isinstance(value, str) else json.dumps(value, indent=2))


@config.command()
@click.option("--no", "decline", is_flag=True, help="Record that the project is not trusted.")
@click.pass_context
def trust(ctx: click.Context, decline: bool) -> None:
    """Trust this workspace: its settings, playbooks and the like apply in full.

    Any folder can be trusted, with or without a .openmono/ of its own."""
    from openmono.agent import trust_question

    opts: RunOptions = ctx.obj
    workspace = (opts.workspace or Path.cwd()).resolve()
    if not workspace.is_dir():
        raise click.ClickException(f"{workspace}: no such folder")
    question = trust_question(workspace, even_if_answered=True)
    parts = question.parts if question else []
    record_project_trust(workspace, not decline, parts)
    if decline:
        said = "not trusted: " + (
            f"left out {'; '.join(question.waiting)}" if question else "nothing in it waits now"
        )
    else:
        said = "trusted: " + (
            f"{'; '.join(question.waiting)} now apply" if question else "nothing in it waits now"
        )
    click.echo(f"{workspace}: {said}")


@config.command("set")
@click.argument("key")
@click.argument("value")
@click.option("--project", is_flag=True, help="Write ./.openmono/settings.json, not the user file.")
@click.pass_context
def set_(ctx: click.Context, key: str, value: str, project: bool) -> None:
    """Set KEY to VALUE (JSON when it parses: true, 3, ["a"]) in the user or project file."""
    opts: RunOptions = ctx.obj
    path = settings_file("project" if project else "user", opts.workspace)
    try:
        stored = set_value(path, key, value)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    shown = "********" if "key" in key.rsplit(".", 1)[-1] else json.dumps(stored)
    click.echo(f"{key} = {shown}  ({path})")


@config.command()
@click.pass_context
def path(ctx: click.Context) -> None:
    """Show which settings files are read, in order."""
    opts: RunOptions = ctx.obj
    files: list[tuple[str, Path | None]] = [
        ("user", user_settings_file()),
        ("project", find_project_file(opts.workspace)),
        ("--config", opts.config),
    ]
    for label, file in files:
        state = "" if file is None else (" (present)" if file.is_file() else " (absent)")
        click.echo(f"{label:8} {file or '-'}{state}")
