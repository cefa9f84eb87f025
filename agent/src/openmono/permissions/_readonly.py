"""Is a shell command one of the read-only commands that run without asking? And why not.

`ReadOnly(workspace, hidden).reason(command, sandboxed=...)` is None when the command may run
without a question, else the reason it asks. The command must parse plainly (`_shell.parse`),
every redirection must throw output away, and every simple command must be an allow-listed
program (`_programs`, `_git`) with allow-listed flags. Then:

- `sandboxed=True` (it will run in the worker's read-only sandbox): that is all; the sandbox
  keeps what the program does to reading the system and the workspace, with no network;
- `sandboxed=False` (no sandbox can run here): the parse must also prove it harmless on its
  own: no git, no `jq`, no glob, no flag that follows symlinks, every path it names inside the
  workspace and none of them a hidden path (`openmono_contracts.sandbox.hidden_paths`), and no
  recursive read of a folder that holds one (`grep -r KEY .` next to `compose/.env`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from openmono.permissions._errors import PermissionsError
from openmono.permissions._git import GLOBAL_FLAGS, GLOBAL_VALUE_FLAGS, SUBCOMMANDS
from openmono.permissions._programs import PROGRAMS, Program, _set
from openmono.permissions._shell import Command, Word, harmless_redirect, parse

# find's expression: primary -> how many words it takes; the rest (`-exec`, `-delete`,
# `-fprint`, `-fls`, ...) make it ask.
_FIND_PRIMARIES = {
    **dict.fromkeys(_set("-name -iname -path -ipath -wholename -iwholename -regex -iregex -type "
                    "-xtype -maxdepth -mindepth -size -mtime -mmin -atime -amin -ctime -cmin "
                    "-newer -anewer -cnewer -perm -user -group -uid -gid -links -inum "
                    "-samefile -printf -regextype -used -lname -ilname -fstype"), 1),
    **dict.fromkeys(_set("-print -print0 -ls -prune -quit -empty -readable -writable -executable "
                    "-true -false -depth -mount -xdev -noleaf -nouser -nogroup -not -and -or "
                    "-a -o ! ( ) , -follow -daystart -ignore_readdir_race"), 0),
}  # fmt: skip
_FIND_PATH_VALUES = frozenset({"-newer", "-anewer", "-cnewer", "-samefile"})
_FIND_FOLLOWS = frozenset({"-L", "-follow"})


class _Asks(PermissionsError):
    """The reason a command needs approval (never leaves this module)."""


@dataclass
class _Parsed:
    """One simple command's flags (with values) and operands, as its program reads them."""

    flags: list[tuple[str, str | None]]
    operands: list[Word]


def _parse_args(prog: Program, name: str, args: Sequence[Word]) -> _Parsed:
    flags: list[tuple[str, str | None]] = []
    operands: list[Word] = []
    i = 0
    options = True
    while i < len(args):
        word = args[i].text
        i += 1
        if prog.lenient or not options or word == "-" or not word.startswith("-"):
            operands.append(args[i - 1])
            continue
        if word == "--":
            options = False
            continue
        if word.startswith("--"):
            flag, eq, value = word[2:].partition("=")
            if flag in prog.long:
                if eq:
                    raise _Asks(f"{name} --{flag} takes no value")
                flags.append((f"--{flag}", None))
            elif flag in prog.long_optional:
                flags.append((f"--{flag}", value if eq else None))
            elif flag in prog.long_value:
                if not eq:
                    if i >= len(args):
                        raise _Asks(f"{name} --{flag} needs a value")
                    value = args[i].text
                    i += 1
                flags.append((f"--{flag}", value))
            else:
                raise _Asks(f"{name} {word.split('=')[0]} is not a flag known to be read-only")
            continue
        if prog.numeric and word[1:].isdigit():
            flags.append(("-N", word[1:]))
            continue
        j = 1
        while j < len(word):
            letter = word[j]
            if letter in prog.short:
                flags.append((f"-{letter}", None))
                j += 1
            elif letter in prog.short_optional:
                flags.append((f"-{letter}", word[j + 1 :] or None))
                break
            elif letter in prog.short_value:
                value = word[j + 1 :]
                if not value:
                    if i >= len(args):
                        raise _Asks(f"{name} -{letter} needs a value")
                    value = args[i].text
                    i += 1
                flags.append((f"-{letter}", value))
                break
            else:
                raise _Asks(f"{name} -{letter} is not a flag known to be read-only")
    return _Parsed(flags, operands)


@dataclass(frozen=True)
class ReadOnly:
    """The read-only check for one workspace (see the module docstring)."""

    workspace: Path
    hidden: tuple[Path, ...] = ()

    def reason(self, command: str, *, sandboxed: bool) -> str | None:
        """None when `command` may run without asking (see the module docstring)."""
        script = parse(command)
        if script is None:
            return (
                "it is not a plain command (an expansion, substitution, assignment, here-doc "
                "or compound statement)"
            )
        try:
            for redirect in script.redirects:
                if redirect.op in ("<", "0<") and not redirect.fd.strip("0"):
                    if not sandboxed:
                        self._path(redirect.target, content=True, tree=False)
                    continue
                if not harmless_redirect(redirect):
                    raise _Asks(f"it writes to {redirect.target}")
            for cmd in script.commands:
                self._command(cmd, sandboxed)
        except _Asks as exc:
            return str(exc)
        return None

    def _command(self, cmd: Command, sandboxed: bool) -> None:
        if "/" in cmd.name:
            raise _Asks(f"{cmd.name} names a program by path")
        if cmd.name == "git":
            if not sandboxed:
                raise _Asks("git runs a repository's own programs (fsmonitor, textconv, hooks)")
            self._git(cmd)
            return
        prog = PROGRAMS.get(cmd.name)
        if prog is None:
            raise _Asks(f"{cmd.name} is not a command known to be read-only")
        if cmd.name == "find":
            self._find(cmd, sandboxed)
            return
        self._checked(prog, cmd.name, list(cmd.args), sandboxed)

    def _checked(self, prog: Program, name: str, args: list[Word], sandboxed: bool) -> None:
        parsed = _parse_args(prog, name, args)
        given = {flag for flag, _ in parsed.flags}
        operands = parsed.operands
        if prog.operands == "none" and operands:
            raise _Asks(f"{name} takes no operands")
        if prog.max_operands is not None and len(operands) > prog.max_operands:
            raise _Asks(f"{name} with {len(operands)} operands writes or changes something")
        if prog.check is not None:
            why = prog.check([o.text for o in operands], given)
            if why:
                raise _Asks(why)
        if sandboxed:
            return
        if not prog.strict:
            raise _Asks(f"{name} is read-only only inside the sandbox, and none runs here")
        if given & prog.follows:
            raise _Asks(f"{name} {sorted(given & prog.follows)[0]} follows symlinks out")
        recursive = prog.recursive or bool(given & prog.recursive_flags)
        for flag, value in parsed.flags:
            if flag in prog.path_values and value is not None:
                self._path(value, content=True, tree=False)
        if prog.operands == "pattern" and not given & prog.pattern_flags and operands:
            operands = operands[1:]  # the first one is the pattern
        if prog.operands in ("text", "none"):
            return
        content = prog.operands in ("paths", "pattern")
        if not operands and recursive:
            self._path(".", content=True, tree=True)
        for word in operands:
            if word.glob:
                raise _Asks("a glob names files the command line does not show")
            self._path(word.text, content=content, tree=recursive)

    def _path(self, raw: str, *, content: bool, tree: bool) -> None:
        """A path a strict command names: inside the workspace and no hidden path (for a
        recursive content read: holding none either)."""
        path = Path(raw)
        if not path.is_absolute():
            path = self.workspace / path
        path = path.resolve()
        if path != self.workspace and self.workspace not in path.parents:
            raise _Asks(f"{raw} is outside the workspace")
        for secret in self.hidden:
            if path == secret or secret in path.parents:
                raise _Asks(f"{raw} is a secret no command reads without asking")
            if content and tree and path in secret.parents:
                raise _Asks(f"{raw} holds {secret.name}, which no command reads without asking")

    def _find(self, cmd: Command, sandboxed: bool) -> None:
        args = [w.text for w in cmd.args]
        globbed = any(w.glob for w in cmd.args)
        i = 0
        while i < len(args) and args[i] in ("-H", "-L", "-P"):
            if args[i] == "-L" and not sandboxed:
                raise _Asks("find -L follows symlinks out")
            i += 1
        roots: list[str] = []
        while i < len(args) and not args[i].startswith("-") and args[i] not in "!(),":
            roots.append(args[i])
            i += 1
        while i < len(args):
            primary = args[i]
            arity = _FIND_PRIMARIES.get(primary)
            if arity is None:
                raise _Asks(f"find {primary} is not an expression known to be read-only")
            if primary in _FIND_FOLLOWS and not sandboxed:
                raise _Asks("find -follow follows symlinks out")
            if arity and i + 1 >= len(args):
                raise _Asks(f"find {primary} needs a value")
            if primary in _FIND_PATH_VALUES and not sandboxed:
                self._path(args[i + 1], content=False, tree=False)
            i += 1 + arity
        if sandboxed:
            return
        if globbed and any(w.glob for w in cmd.args[: len(roots) + 1]):
            raise _Asks("a glob names files the command line does not show")
        for root in roots or ["."]:
            self._path(root, content=False, tree=True)

    def _git(self, cmd: Command) -> None:
        args = list(cmd.args)
        i = 0
        while i < len(args) and args[i].text.startswith("-"):
            flag = args[i].text
            if flag in GLOBAL_FLAGS:
                i += 1
            elif flag in GLOBAL_VALUE_FLAGS and i + 1 < len(args):
                i += 2
            elif flag == "--version" and len(args) == 1:
                return
            else:
                raise _Asks(f"git {flag} is not an option known to be read-only")
        if i >= len(args):
            raise _Asks("git without a subcommand")
        sub = args[i].text
        prog = SUBCOMMANDS.get(sub)
        if prog is None:
            raise _Asks(f"git {sub} is not a subcommand known to be read-only")
        self._checked(prog, f"git {sub}", args[i + 1 :], sandboxed=True)
