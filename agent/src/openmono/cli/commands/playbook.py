"""`openmono playbook list|check|run`: repeatable workflows from PLAYBOOK.md files.

`run NAME --param k=v [--resume] [--yes]` runs every step in the workspace. At a terminal a gate
shows the rendered step and asks; `--yes` passes every gate (for scripts); without it a gate in
a non-interactive run stops the run with a message and exit code 3, and `--resume` goes on from
that step. Tool permissions are asked at a terminal and denied (with a message the model reads)
elsewhere, as with `-p`; `--allow`/`--yolo` before the subcommand apply.

Exit codes: 0 every step done; 1 a step failed or a gate was denied; 2 the playbook, its
parameters or the configuration is invalid; 3 a gate needs a person; 130 interrupted.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from openmono.config import RunOptions

if TYPE_CHECKING:
    from openmono.permissions import Answer, PermissionRequest
    from openmono.playbooks import GateRequest, Playbook

EXIT_OK, EXIT_FAILED, EXIT_INVALID, EXIT_GATE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


@click.group()
def playbook() -> None:
    """List, check and run playbooks (project, user and shipped ones)."""


def _where(ctx: click.Context) -> tuple[RunOptions, Path, Path]:
    opts: RunOptions = ctx.obj
    settings = opts.settings()
    return opts, opts.workspace_dir(settings), settings.data_dir


@playbook.command("list")
@click.pass_context
def list_(ctx: click.Context) -> None:
    """Every playbook found, the one that wins each name first; broken ones with their error."""
    from openmono.playbooks import UNTRUSTED, discover

    _opts, workspace, data_dir = _where(ctx)
    catalog = discover(workspace, data_dir)
    for pb in sorted(catalog.playbooks.values(), key=lambda p: p.name):
        trigger = f" · trigger {pb.front.trigger}" if pb.front.trigger != "manual" else ""
        click.echo(f"{pb.name:<22} {pb.front.version:<8} {pb.source:<8}{trigger}")
        if pb.front.description:
            click.echo(f"    {pb.front.description}")
        for warning in pb.warnings:
            click.echo(f"    warning: {warning}")
    for pb in catalog.shadowed:
        click.echo(f"(shadowed) {pb.name} from {pb.source}: {pb.file}")
    for folder, exc in sorted(catalog.errors.items()):
        click.echo(f"(invalid) {folder}: {exc}", err=True)
    for waiting in catalog.untrusted:
        click.echo(f"(not loaded) {waiting / 'PLAYBOOK.md'}")
    if catalog.untrusted:
        click.echo(UNTRUSTED)
    if not catalog.playbooks and not catalog.errors:
        click.echo("no playbooks")


@playbook.command("check")
@click.argument("targets", nargs=-1, required=True, metavar="NAME_OR_PATH...")
@click.pass_context
def check(ctx: click.Context, targets: tuple[str, ...]) -> None:
    """Validate playbooks (names, folders or PLAYBOOK.md files) without running anything."""
    from openmono.playbooks import PlaybookError

    _opts, workspace, data_dir = _where(ctx)
    bad = 0
    for target in targets:
        try:
            pb = _checked(workspace, data_dir, target)
        except PlaybookError as exc:
            click.echo(f"invalid: {exc}", err=True)
            bad += 1
            continue
        click.echo(f"ok: {pb.name} {pb.front.version} ({len(pb.order)} steps) {pb.file}")
        for warning in pb.warnings:
            click.echo(f"  warning: {warning}")
    sys.exit(EXIT_INVALID if bad else EXIT_OK)


def _checked(workspace: Path, data_dir: Path, target: str) -> Playbook:
    """`target` as a path when one exists there (or it looks like one), else as a name."""
    from openmono.playbooks import FILE_NAME, PlaybookNotFound, find_playbook, load_playbook

    path = Path(target).expanduser()
    if path.is_file() or (path / FILE_NAME).is_file():
        return load_playbook(path.parent if path.is_file() else path)
    if ("/" in target or target.startswith(".")) and not path.exists():
        raise PlaybookNotFound(f"{target}: no such file or directory")
    return find_playbook(workspace, data_dir, target)


@playbook.command("run")
@click.argument("name")
@click.option("--param", "-P", "params", multiple=True, metavar="NAME=VALUE",
              help="A parameter value (repeatable).")  # fmt: skip
@click.option("--resume", is_flag=True, help="Continue the last unfinished run of NAME here.")
@click.option("--yes", "-y", is_flag=True, help="Pass every gate without asking.")
@click.pass_context
def run(ctx: click.Context, name: str, params: tuple[str, ...], resume: bool, yes: bool) -> None:
    """Run the playbook NAME (a name, or the path of a playbook folder)."""
    from openmono.errors import OpenMonoError
    from openmono.playbooks import ValueInvalid, find_playbook, parse_assignments

    opts, workspace, data_dir = _where(ctx)
    try:
        given = parse_assignments(params)
    except ValueInvalid as exc:
        raise click.UsageError(str(exc)) from None
    try:
        pb = find_playbook(workspace, data_dir, name)
    except OpenMonoError as exc:
        click.echo(f"openmono: {exc}", err=True)
        sys.exit(EXIT_INVALID)
    sys.exit(asyncio.run(_run(opts, workspace, data_dir, pb, given, resume, yes)))


async def _run(
    opts: RunOptions,
    workspace: Path,
    data_dir: Path,
    pb: Playbook,
    given: dict[str, str],
    resume: bool,
    yes: bool,
) -> int:
    from openmono.agent import open_agent
    from openmono.cli.render import PlainRenderer
    from openmono.errors import OpenMonoError
    from openmono.playbooks import (
        Host,
        PlaybookRunner,
        approve_all,
        no_gate,
        resolve_parameters,
    )

    interactive = sys.stdin.isatty()
    try:
        if not resume:  # parameters are checked before anything opens, let alone runs
            resolve_parameters(pb.file, pb.front.parameters, given)
        agent = await open_agent(
            opts.settings(), workspace, mode=opts.mode, allow=opts.allow, yolo=opts.yolo,
            approver=_terminal_approver if interactive else None,
        )  # fmt: skip
    except OpenMonoError as exc:
        click.echo(f"openmono: {exc}", err=True)
        return EXIT_INVALID
    gate = approve_all if yes else (_terminal_gate if interactive else no_gate)
    runner = PlaybookRunner(
        pb,
        Host.of(agent.loop, agent.store.root / agent.session_id, data_dir),
        gate,
        PlainRenderer(),
    )
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(runner.run(given, resume=resume))
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, task.cancel)
    try:
        result = await task
    except asyncio.CancelledError:
        click.echo(
            f"\ninterrupted; `--resume` continues (checkpoint {runner.checkpoint})", err=True
        )
        return EXIT_INTERRUPTED
    except OpenMonoError as exc:
        click.echo(f"openmono: {exc}", err=True)
        return EXIT_INVALID
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await agent.aclose()
    click.echo(f"\n{result.message}", err=True)
    if result.ok:
        return EXIT_OK
    return EXIT_GATE if result.status == "stopped" else EXIT_FAILED


async def _terminal_gate(request: GateRequest) -> bool:
    where = "before" if request.phase == "before" else "after"
    click.echo(f"\n--- {request.kind} gate {where} step {request.step!r} ---\n{request.text}\n---")
    return await asyncio.to_thread(click.confirm, "Go on?", default=False, err=True)


async def _terminal_approver(request: PermissionRequest) -> Answer:
    from openmono.cli.render import argument_lines, call_label

    args = dict(request.arguments)
    click.echo(f"? allow {call_label(request.tool, args)} ({request.reason})", err=True)
    for line in argument_lines(request.tool, args):
        click.echo(f"    {line}", err=True)
    answer: str = await asyncio.to_thread(
        click.prompt, "  [y] once  [a] this session  [n] no", default="n", err=True
    )
    choice = answer.strip().lower()[:1]
    return "once" if choice == "y" else "session" if choice == "a" else "deny"
