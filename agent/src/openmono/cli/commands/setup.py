"""`openmono setup gateway | search | scraper`: secrets, switches, frpc, agent settings, start."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from openmono.cli.commands._via import via_option
from openmono.config import current_environ
from openmono.setup import SetupError, Target, Via, apply, plan
from openmono.setup.frpc import config_path as frpc_file


def _root() -> Path | None:
    return current_environ().checkout


def _env_file(root: Path | None) -> Path:
    del root  # the env file every command reads (OPENMONO_ENV_FILE, else the checkout's)
    env = current_environ()
    if env.file_path is None:
        raise SetupError(env.checkout_problem)
    return env.file_path


def _run(target: Target, dry_run: bool, no_start: bool, via: Via) -> None:
    try:
        root = _root()
        result = plan(
            target,
            root=root,
            env_file=_env_file(root),
            frpc_file=frpc_file(root),
            via=via,
            start=not no_start,
        )
        for line in result.lines(dry_run):
            click.echo(line)
        if not dry_run:
            apply(result, click.echo)
            click.echo("done")
    except SetupError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


_dry = click.option("--dry-run", is_flag=True, help="Print what would change; change nothing.")
_no_start = click.option("--no-start", is_flag=True, help="Write the files; start nothing.")
_via = via_option(
    "How to start: compose needs a Docker engine; auto picks compose when one answers."
)


@click.group()
def setup() -> None:
    """Prepare this box: secrets in .env, services switched on and started, agent configured."""


@setup.command()
@_dry
@_no_start
@_via
@click.option(
    "--rotate-key",
    is_flag=True,
    help="Replace LLAMA_API_KEY, restart the gateway (the old key stops working), print the "
    "new join lines.",
)
@click.option("--relay-url", help="With --rotate-key: the relay URL for the join lines.")
def gateway(
    dry_run: bool, no_start: bool, via: Via, rotate_key: bool, relay_url: str | None
) -> None:
    """The gateway and the LLM behind it (generates LLAMA_API_KEY when missing)."""
    if rotate_key:
        _rotate(via, relay_url, dry_run)
        return
    _run("gateway", dry_run, no_start, via)


def _rotate(via: Via, relay_url: str | None, dry_run: bool) -> None:
    from openmono.setup import join as joining
    from openmono.stack import read_env

    try:
        root = _root()
        env_file = _env_file(root)
        mode, why = joining.reload_mode(root, env_file, via) if root is not None else (via, via)
        if dry_run:
            for line in joining.rotation_lines(root, env_file, mode, why):
                click.echo(line)
            return
        joining.rotate_key(root, env_file, mode, click.echo)
        url = relay_url or read_env(env_file).get(joining.RELAY_URL_ENV)
        if not url:
            click.echo("new join lines: `openmono setup join --relay-url https://RELAY:PORT`")
            return
        click.echo("")
        for line in joining.join(root, env_file, url, via=mode):
            click.echo(line)
    except SetupError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


@setup.command()
@click.option(
    "--relay-url",
    required=True,
    help="How agent boxes reach this gateway: https://RELAY:PORT (the relay's remotePort).",
)
@click.option(
    "--ca-file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The gateway's CA certificate (default: the native stack's, else compose's caddy).",
)
@via_option("Whose CA: auto = a running native gateway's, else the compose caddy's.")
@click.option(
    "--name",
    help="Issue this box its own key (as `openmono keys add NAME`) for the lines; without it "
    "they carry LLAMA_API_KEY, the operator's key.",
)
@click.option("--expires", type=float, metavar="DAYS", help="With --name: the key's lifetime.")
@click.option("--rate", metavar="N/min", help="With --name: the key's rate limit.")
def join(
    relay_url: str,
    ca_file: Path | None,
    via: Via,
    name: str | None,
    expires: float | None,
    rate: str | None,
) -> None:
    """Print the `export` lines that join an agent box to this gateway (endpoint, key, CA)."""
    from openmono.keys import KeysCommandError, open_backend
    from openmono.setup import join as joining

    if name is None and (expires is not None or rate is not None):
        click.echo("error: --expires and --rate go with --name", err=True)
        sys.exit(2)

    def issue() -> str:
        backend = open_backend(via, lambda line: click.echo(line, err=True))
        issued = backend.add(str(name), expires, rate)
        click.echo(f"issued key {issued.name!r} (shown once, below)", err=True)
        return issued.key

    try:
        root = _root()
        lines = joining.join(
            root, _env_file(root), relay_url, ca_file, via, issue if name else None
        )
    except SetupError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except KeysCommandError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2 if exc.mistake else 1)
    for line in lines:
        click.echo(line)


@setup.command()
@_dry
@_no_start
@_via
def search(dry_run: bool, no_start: bool, via: Via) -> None:
    """SearXNG behind the gateway (WEB_SEARCH_ENABLED, SEARXNG_SECRET)."""
    _run("search", dry_run, no_start, via)


@setup.command()
@_dry
@_no_start
@_via
def scraper(dry_run: bool, no_start: bool, via: Via) -> None:
    """The scrape service behind the gateway (WEB_SCRAPE_ENABLED)."""
    _run("scraper", dry_run, no_start, via)


@setup.command()
@click.option("--force", is_flag=True, help="Replace a model file that is already there.")
def model(force: bool) -> None:
    """Put the bundled default model (SmolLM2) where compose's llama-server finds it:
    MODELS_DIR/LLAMA_MODEL_FILE of the .env (a relative MODELS_DIR is relative to compose/), and
    give it the chat template that renders tools (LLAMA_CHAT_TEMPLATE, unless one is set)."""
    import shutil

    from openmono.errors import OpenMonoError
    from openmono.stack import SMOLLM2_TEMPLATE, default_model_path, set_env

    try:
        root = _root()
        environ = current_environ()
        env_file = _env_file(root)
        source = default_model_path()
    except OpenMonoError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    folder = Path(environ.get("MODELS_DIR") or "../models").expanduser()
    if not folder.is_absolute():
        base = root / "compose" if root is not None else Path.cwd()
        folder = (base / folder).resolve()
    name = environ.get("LLAMA_MODEL_FILE") or "model.gguf"
    target = folder / name
    if not environ.get("LLAMA_CHAT_TEMPLATE") and env_file.is_file():
        set_env(env_file, {"LLAMA_CHAT_TEMPLATE": SMOLLM2_TEMPLATE.name})
        click.echo(f"LLAMA_CHAT_TEMPLATE={SMOLLM2_TEMPLATE.name} in {env_file} (tools for SmolLM2)")
    if target.is_file() and not force:
        click.echo(f"{target} is already there (--force replaces it)")
        return
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    shutil.copyfile(source, partial)  # then rename: compose never sees half a model
    partial.replace(target)
    target.chmod(0o644)
    click.echo(f"copied {source.name} to {target} (compose serves it as /models/{name})")
