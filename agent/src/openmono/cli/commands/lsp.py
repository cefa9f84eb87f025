"""`openmono lsp list|install|remove`: the language servers the tools use, and those the user
installs from npm into the data dir (`openmono_worker.codeintel._install`).

Installing is the user's act: this command is how consent is given. The tools never install; a
tool that finds no server names the command that would install one. The data dir is this
machine's: a worker in a container has its own (install there with the same command).
"""

from __future__ import annotations

from pathlib import Path

import click

# openmono_worker's language-server names load the code-intelligence stack: only when a
# subcommand runs, not each time `openmono` starts
import openmono_worker as worker

from openmono.config import RunOptions


def _data_dir(ctx: click.Context) -> Path:
    opts: RunOptions = ctx.obj
    return opts.settings().data_dir


@click.group()
def lsp() -> None:
    """Language servers: which languages have one, install or remove those npm ships."""


@lsp.command("list")
@click.pass_context
def list_(ctx: click.Context) -> None:
    """Each language, its server (or none) and whether `openmono lsp install` can add one."""
    data_dir = _data_dir(ctx)
    for lang in worker.LANGUAGES:
        exe = lang.executable(data_dir)
        item = worker.for_language(lang.id)
        hint = f"  (openmono lsp install {item.name})" if item and exe is None else ""
        click.echo(f"{lang.id:12s} {exe or 'none'}{hint}")
    click.echo("\ninstallable from npm into " + str(data_dir / "lsp") + ":")
    for item in worker.INSTALLABLE:
        state = "installed" if worker.server_installed(data_dir, item) else "not installed"
        note = f"; {item.note}" if item.note else ""
        click.echo(f"  {item.name:12s} {' '.join(item.packages)}  [{state}{note}]")


@lsp.command("install")
@click.argument("name")
@click.option("--yes", "-y", is_flag=True, help="Do not ask before downloading.")
@click.pass_context
def install_(ctx: click.Context, name: str, yes: bool) -> None:
    """Install NAME's server from npm into the data dir (asks first; --yes does not)."""
    data_dir = _data_dir(ctx)
    try:
        item = worker.installable_server(name)
    except worker.InstallFailed as exc:
        raise click.ClickException(str(exc)) from None
    where = data_dir / "lsp" / item.name
    question = f"Install {' '.join(item.packages)} from the npm registry into {where}?"
    if not yes and not click.confirm(question, default=False):
        raise click.ClickException("not installed (no consent given)")
    click.echo(f"installing {item.name} (npm, at most a few minutes)…")
    try:
        worker.install_server(data_dir, item)
    except worker.InstallFailed as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"installed {item.name}: {where}")


@lsp.command("remove")
@click.argument("name")
@click.pass_context
def remove_(ctx: click.Context, name: str) -> None:
    """Remove NAME's installed server from the data dir."""
    try:
        item = worker.installable_server(name)
    except worker.InstallFailed as exc:
        raise click.ClickException(str(exc)) from None
    if worker.remove_server(_data_dir(ctx), item):
        click.echo(f"removed {item.name}")
    else:
        click.echo(f"{item.name} was not installed")
