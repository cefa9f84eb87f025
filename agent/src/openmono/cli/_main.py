"""Root of the `openmono` command group; subcommand modules register themselves here.

`openmono -p "task"` runs one task and exits; `openmono` alone starts the interactive session:
the full-screen UI, or the line REPL with `--classic` or when stdout is not a terminal (with stdin
not a terminal, the task is read from stdin). The root options (`--config`,
`--endpoint`, `-C`, ...) apply to every subcommand that reads settings.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click

from openmono.config import MODES, RunOptions

EXIT_CONFIG = 2


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from openmono.cli._version import version_line

    click.echo(version_line())
    ctx.exit(0)


@click.group(
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
    help="The version, the checkout it runs from and its commit; then exit.",
)  # fmt: skip
@click.option(
    "-p", "--print", "prompt", metavar="TASK", help="Run TASK non-interactively, then exit."
)
@click.option(
    "--output-format",
    type=click.Choice(["text", "json", "stream-json"]),
    default="text",
    show_default=True,
    help=(
        "With -p: the answer as text, one JSON object at the end, or JSON lines as it happens "
        "(stream-json: each line has a kind: session, text, reasoning, tool_started, "
        "permission_asked, tool_finished, usage, notice, done; fields in docs/one-shot.md)."
    ),
)
@click.option(
    "--allow", multiple=True, metavar="TOOL[:PATTERN]",
    help="Allow a tool without asking (repeatable): --allow FileWrite --allow 'Bash:pytest*'.",
)  # fmt: skip
@click.option(
    "--classic", is_flag=True,
    help="Interactive: the line REPL in the terminal's scrollback instead of the full-screen UI.",
)  # fmt: skip
@click.option("--yolo", is_flag=True, help="Allow every call (built-in denials still apply).")
@click.option("--mode", type=click.Choice(MODES), help="agent (default), plan or ask (read-only).")
@click.option(
    "--resume", metavar="ID", help="Continue a saved session (an id, a prefix or 'last')."
)
@click.option(
    "--config", "config_file", type=click.Path(path_type=Path, dir_okay=False),
    help="A settings JSON file applied over the user and project files.",
)  # fmt: skip
@click.option("--endpoint", metavar="URL", help="LLM endpoint (llm.endpoint).")
@click.option("--api-key", metavar="KEY", help="Bearer key for the endpoint (llm.api_key).")
@click.option("--model", metavar="NAME", help="Model name to request (llm.model).")
@click.option("--max-iterations", type=click.IntRange(min=1), help="Tool rounds per task.")
@click.option(
    "--insecure-http", is_flag=True,
    help="Allow plain http:// to a non-loopback endpoint (key and prompts cross in clear).",
)  # fmt: skip
@click.option(
    "-C", "--workspace", type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="The project directory (default: the current directory).",
)  # fmt: skip
@click.pass_context
def main(
    ctx: click.Context,
    prompt: str | None,
    output_format: str,
    allow: tuple[str, ...],
    classic: bool,
    yolo: bool,
    mode: str | None,
    resume: str | None,
    config_file: Path | None,
    endpoint: str | None,
    api_key: str | None,
    model: str | None,
    max_iterations: int | None,
    insecure_http: bool,
    workspace: Path | None,
) -> None:
    """OpenMono: a coding agent for a local llama.cpp model, and the stack that serves it."""
    opts = RunOptions(
        prompt=prompt,
        output_format=output_format,
        allow=allow,
        yolo=yolo,
        mode=mode,  # type: ignore[arg-type]
        resume=resume,
        config=config_file,
        endpoint=endpoint,
        api_key=api_key,
        model=model,
        max_iterations=max_iterations,
        insecure_http=insecure_http,
        workspace=workspace.resolve() if workspace else None,
    )
    ctx.obj = opts
    if ctx.invoked_subcommand is not None:
        return
    if prompt is None and not sys.stdin.isatty():
        prompt = sys.stdin.read().strip()
        if not prompt:
            raise click.UsageError("no task: give one with -p TASK (or on stdin)")
    ctx.exit(_run(opts, prompt, classic))


def _run(opts: RunOptions, prompt: str | None, classic: bool = False) -> int:
    from openmono.errors import OpenMonoError

    try:
        if prompt is not None:
            from openmono.cli._oneshot import run_oneshot

            return asyncio.run(run_oneshot(opts, prompt))
        if not classic and not sys.stdout.isatty():
            click.echo("openmono: stdout is not a terminal: using the line REPL", err=True)
            classic = True
        if classic:
            from openmono.cli._repl import Repl

            return asyncio.run(Repl(opts).run())
        from openmono.cli.tui import run_tui

        return run_tui(opts)
    except OpenMonoError as exc:
        click.echo(f"openmono: {exc}", err=True)
        return EXIT_CONFIG


def _register() -> None:
    from openmono.cli.commands import stack

    main.add_command(stack.up)
    main.add_command(stack.down)
    main.add_command(stack.status)
    main.add_command(stack.restart)

    from openmono.cli.commands.setup import setup
    from openmono.cli.commands.tunnel import tunnel

    main.add_command(setup)
    main.add_command(tunnel)

    from openmono.cli.commands.keys import keys

    main.add_command(keys)

    from openmono.cli.commands.acp import acp, serve

    main.add_command(acp)
    main.add_command(serve)


def _register_agent() -> None:
    from openmono.cli.commands.config import config
    from openmono.cli.commands.doctor import doctor
    from openmono.cli.commands.lsp import lsp
    from openmono.cli.commands.playbook import playbook
    from openmono.cli.commands.sessions import sessions

    main.add_command(sessions)
    main.add_command(config)
    main.add_command(doctor)
    main.add_command(lsp)
    main.add_command(playbook)


def summarize(group: click.Group) -> None:
    """Give every command of `group`'s tree its whole first help paragraph as the summary the
    `--help` listings show: click cuts its own at about 45 columns with "..." (or at an "e.g.")."""
    for command in group.commands.values():
        if command.short_help is None and command.help:
            command.short_help = " ".join(command.help.split("\n\n")[0].split())
        if isinstance(command, click.Group):
            summarize(command)


_register()
_register_agent()
summarize(main)
