"""`--via`: which stack a command acts on (setup, setup join, keys). One choice list, from
`openmono.setup.Via`; each command says in its help what `auto` picks for it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, get_args

import click

from openmono.setup import Via

F = TypeVar("F", bound=Callable[..., Any])


def via_option(help: str) -> Callable[[F], F]:
    return click.option(
        "--via",
        type=click.Choice(list(get_args(Via))),
        default="auto",
        show_default=True,
        help=help,
    )
