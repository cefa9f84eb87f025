"""Rules over shell commands: what "allow for the session" stores, and what a rule matches.

A pattern over a whole command line (`pytest *`) would also match `pytest -q; touch x` and
`pytest && cat ~/.ssh/id_rsa`. So for shell tools:

- an **allow** pattern (a rule, `--allow Bash:...`, a session approval) with a wildcard matches a
  command only when the command parses plainly (`_shell.parse`: no substitution, expansion or
  assignment), writes nowhere by redirection, and every simple command of it matches an allowed
  pattern on its own; a pattern without a wildcard matches exactly that command line;
- a **deny** or **ask** pattern matches the whole line or any simple command in it (so
  `rm *` stops `ls; rm -rf x` too); a line the parser cannot read is split on its operators.

"Allow for the session" stores (`session_grant`) `PROGRAM *` for a plain simple command,
`PROGRAM SUBCOMMAND *` for programs whose first word picks what they do (`git commit`, `npm
test`), and the exact command (glob characters escaped) for everything else: a list, a
pipeline, a redirection, an expansion, a program named by path, or a program that runs other
programs or code it is given (`bash`, `env`, `xargs`, `python`, `find`, ...).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import fnmatchcase

from openmono.permissions._shell import harmless_redirect, parse

# Programs whose arguments are another program or code to run: approving one call of them
# approves exactly that call.
EXACT_ONLY = frozenset({
    "bash", "sh", "zsh", "dash", "ksh", "fish", "env", "xargs", "nohup", "time", "timeout",
    "nice", "ionice", "exec", "eval", "command", "builtin", "source", ".", "sudo", "doas", "su",
    "ssh", "setsid", "stdbuf", "watch", "parallel", "find", "awk", "gawk", "sed", "perl",
    "ruby", "python", "python3", "node", "deno", "bun", "php", "lua", "Rscript", "osascript",
    "chroot", "unshare", "nsenter", "strace", "gdb", "script", "flock", "setpriv", "runuser",
})  # fmt: skip
# Programs whose first word chooses what they do: a grant covers that subcommand only.
SUBCOMMANDS = frozenset({
    "git", "npm", "pnpm", "yarn", "npx", "cargo", "go", "uv", "uvx", "pip", "pip3", "poetry",
    "docker", "podman", "kubectl", "helm", "gh", "dotnet", "make", "just", "mvn", "gradle",
    "bundle", "rake", "mix", "rustup", "terraform", "systemctl", "brew", "apt", "apt-get",
    "conda", "pdm", "hatch", "tox", "nox", "openmono",
})  # fmt: skip
_ESCAPED = re.compile(r"\[([*?\[])\]")
_SPLIT = re.compile(r"\|\||&&|[;|&\n]")


def escape(text: str) -> str:
    """`text` as a pattern that matches only itself."""
    return re.sub(r"([*?\[])", r"[\1]", text)


def _literal(pattern: str) -> str | None:
    """The text a wildcard-free pattern stands for; None when it has a wildcard."""
    if any(c in _ESCAPED.sub("", pattern) for c in "*?["):
        return None
    return _ESCAPED.sub(r"\1", pattern)


def session_grant(command: str) -> str:
    """What "allow for the session" stores for `command` (see the module docstring)."""
    script = parse(command)
    exact = escape(command.strip())
    if script is None or script.chained or not all(map(harmless_redirect, script.redirects)):
        return exact
    cmd = script.commands[0]
    if "/" in cmd.name or cmd.name in EXACT_ONLY or cmd.name.startswith("python"):
        return exact
    if cmd.name in SUBCOMMANDS and cmd.args and not cmd.args[0].text.startswith("-"):
        return f"{escape(cmd.name)} {escape(cmd.args[0].text)} *"
    return f"{escape(cmd.name)} *"


def allowed(patterns: Iterable[str], command: str) -> str | None:
    """The allow pattern that lets `command` run, or None (see the module docstring)."""
    patterns = list(patterns)
    line = command.strip()
    for pattern in patterns:
        if pattern in ("", "*"):
            return pattern
        literal = _literal(pattern)
        if literal is not None and literal.strip() == line:
            return pattern
    wild = [p for p in patterns if _literal(p) is None]
    if not wild:
        return None
    script = parse(command)
    if script is None or not all(map(harmless_redirect, script.redirects)):
        return None
    used: list[str] = []
    for cmd in script.commands:
        # `pytest *` is pytest with any arguments, or none
        hit = next((p for p in wild if _fits(cmd.source, p)), None)
        if hit is None:
            return None
        used.append(hit)
    return used[0]


def _fits(source: str, pattern: str) -> bool:
    return fnmatchcase(source, pattern) or fnmatchcase(f"{source} ", pattern)


def parts(command: str) -> list[str]:
    """The simple commands of `command` as written (split on operators if it does not parse)."""
    script = parse(command)
    if script is not None:
        return [c.source for c in script.commands]
    return [s.strip() for s in _SPLIT.split(command) if s.strip()]


def hits(pattern: str, command: str) -> bool:
    """Does a deny or ask pattern match `command` (the line, or any simple command of it)?"""
    if pattern in ("", "*") or fnmatchcase(command, pattern):
        return True
    return any(fnmatchcase(part, pattern) for part in parts(command))
