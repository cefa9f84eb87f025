"""The environment a user's own commands run with: theirs, without OpenMono's interpreter in it.

The Bash tool, hooks and stdio MCP servers run the user's commands (`python -m pytest`, `npm
test`), so they must find the user's `python`, not the one OpenMono runs on. `uv run` and
`make` put OpenMono's virtual environment first on `PATH` and set `VIRTUAL_ENV` (and uv its
recursion marker); an installed `openmono` (`make install`) sets nothing, but its worker may have
been started from such a shell. This takes exactly those traces of our own interpreter out and
leaves everything else as the user has it. Nothing is removed when OpenMono does not run in a
virtual environment: then its prefix is a system one (`/usr`), which is the user's too.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

# set by `uv run` for its own children; a user's `uv run` in the tool's shell would misread it
_UV_MARKERS = ("UV_RUN_RECURSION_DEPTH",)


def _inside(entry: str, prefix: Path) -> bool:
    try:
        path = Path(entry).resolve()
    except (OSError, RuntimeError):
        return False
    return path == prefix or prefix in path.parents


def user_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`environ` (default: this process's) without OpenMono's own virtual environment."""
    env = dict(os.environ if environ is None else environ)
    if sys.prefix == sys.base_prefix:
        return env  # not a virtual environment: our prefix is the system's
    ours = Path(sys.prefix).resolve()
    venv = env.get("VIRTUAL_ENV")
    if venv and _inside(venv, ours):
        env.pop("VIRTUAL_ENV", None)
        env.pop("VIRTUAL_ENV_PROMPT", None)
    for name in _UV_MARKERS:
        env.pop(name, None)
    for name in ("PATH", "PYTHONPATH"):
        if name in env:
            kept = [e for e in env[name].split(os.pathsep) if e and not _inside(e, ours)]
            if kept:
                env[name] = os.pathsep.join(kept)
            else:
                env.pop(name)
    if env.get("PYTHONHOME") and _inside(env["PYTHONHOME"], ours):
        env.pop("PYTHONHOME")
    return env
