"""The commands that have `--dry-run`, found in the click tree (never a hand list), and the
arguments to walk them with: `tests/integration/test_dry_run.py`, `tests/e2e/test_first_hour.py`."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import click

# values for required options (a new required option without one fails the walk, by name)
SAMPLES = {"server_addr": "relay.example", "token": "t0ken-sample", "remote_port": "47443"}


def dry_run_commands(
    group: click.Group, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every command under `group` that has a `--dry-run` option, with its path of names."""
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from dry_run_commands(command, (*path, name))
        elif any(isinstance(p, click.Option) and "--dry-run" in p.opts for p in command.params):
            yield (*path, name), command


def variants(command: click.Command) -> list[list[str]]:
    """`--dry-run` alone, with each flag, each choice, and each flag beside each choice."""
    flags: list[list[str]] = []
    choices: list[list[str]] = []
    for p in command.params:
        if not isinstance(p, click.Option) or "--dry-run" in p.opts or p.hidden:
            continue
        if p.is_flag:
            flags += [[opt] for opt in (p.opts[-1], *p.secondary_opts)]
        elif isinstance(p.type, click.Choice):
            choices += [[p.opts[-1], str(c)] for c in p.type.choices]
    pairs = [f + c for f, c in itertools.product(flags, choices)]
    return [[], *flags, *choices, *pairs]


def required(command: click.Command) -> list[str]:
    args: list[str] = []
    for p in command.params:
        if isinstance(p, click.Option) and p.required:
            assert p.name in SAMPLES, f"add a sample value for required option {p.name!r}"
            args += [p.opts[-1], SAMPLES[p.name]]
    return args
