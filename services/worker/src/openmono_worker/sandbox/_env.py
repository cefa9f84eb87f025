"""The environment of a sandboxed command.

`read_only` (a command nobody approved) gets a short allow-list of the user's variables, so
`echo $GITHUB_TOKEN` or `jq -n env` tells the model nothing, and no `BASH_ENV` or exported
function runs first. `HOME` and `TMPDIR` are the call's private folder (home is not in the view),
and git is told to take no lock (`GIT_OPTIONAL_LOCKS=0`: `git status` does not try to write the
index), to start no fsmonitor and to find no hooks: a repository someone else prepared runs
nothing of its own, even before the sandbox would stop it writing.

`workspace_write` (a command the user approved) keeps the user's environment, with `TMPDIR` the
private folder (`/tmp` is not in the view).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from openmono_contracts.sandbox import SandboxPolicy

KEPT = frozenset({"PATH", "LANG", "LANGUAGE", "TERM", "TZ", "USER", "LOGNAME", "SHELL", "COLUMNS",
                  "LINES", "NO_COLOR", "PAGER", "GIT_PAGER", "GIT_TERMINAL_PROMPT"})  # fmt: skip
_GIT_CONFIG = (("core.fsmonitor", ""), ("core.hooksPath", "/dev/null"))


def absolute_path_entries(value: str) -> str:
    """PATH without its relative entries (`.`, empty: the current folder is the workspace)."""
    return ":".join(p for p in value.split(":") if p.startswith("/"))


def sandbox_env(policy: SandboxPolicy, base: Mapping[str, str], tmp: Path) -> dict[str, str]:
    """The environment of a command under `policy` (see the module docstring)."""
    if policy == "workspace_write":
        env = dict(base)
        env["TMPDIR"] = str(tmp)
        return env
    env = {k: v for k, v in base.items() if k in KEPT or k.startswith("LC_")}
    env["PATH"] = absolute_path_entries(env.get("PATH", "/usr/bin:/bin"))
    env.update({"HOME": str(tmp), "TMPDIR": str(tmp), "GIT_OPTIONAL_LOCKS": "0"})
    env["GIT_CONFIG_COUNT"] = str(len(_GIT_CONFIG))
    for i, (key, value) in enumerate(_GIT_CONFIG):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env
