"""Root of the `openmono` command group; subcommand modules register themselves here."""

import click

from openmono import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="openmono")
def main() -> None:
    """OpenMono: a coding agent for a local llama.cpp model, and the stack that serves it."""


def _register() -> None:
    from openmono.cli import stack_cmds

    main.add_command(stack_cmds.up)
    main.add_command(stack_cmds.down)
    main.add_command(stack_cmds.status)


_register()
