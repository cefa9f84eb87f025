"""Reading a shell command well enough to refuse the dangerous and wave through the harmless.

This is not a shell parser; it errs on the side of "not known safe". A command is auto-allowed
only when every segment (split on `;`, `&&`, `||`, `|`, `&`, newlines) is a known read-only
command, with no output redirection, command substitution or process substitution anywhere.
"""

from __future__ import annotations

import re
import shlex

_SEGMENT_SPLIT = re.compile(r"\|\||&&|[;|&\n]")
_HARMLESS_REDIRECTS = re.compile(r"\d?>\s*/dev/null|\d>&\d|&>\s*/dev/null")

# Read-only commands whose every invocation (bar the flags listed in _UNSAFE_FLAGS) only reads.
SAFE_COMMANDS = frozenset(
    {
        "ls", "cat", "head", "tail", "wc", "pwd", "echo", "printf", "rg", "grep", "egrep", "fgrep",
        "find", "tree", "file", "stat", "du", "df", "which", "whoami", "date", "uname", "sort",
        "uniq", "cut", "diff", "basename", "dirname", "realpath", "readlink", "true", "false",
        "nl", "tac", "less", "more", "md5sum", "sha256sum", "id", "hostname", "type", "jq",
        "column",
    }
)  # fmt: skip
SAFE_GIT = frozenset(
    {"status", "diff", "log", "show", "blame", "ls-files", "rev-parse", "branch", "describe",
     "shortlog", "grep", "remote", "tag"}
)  # fmt: skip
_UNSAFE_FLAGS: dict[str, tuple[str, ...]] = {
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprintf", "-fls"),
    "rg": ("--pre",),
    "sort": ("-o", "--output"),
    "git": ("--output", "-c", "--exec-path", "-d", "-D", "--delete", "-m", "-M", "--move", "add",
            "remove", "rm", "rename", "set-url", "--set-upstream-to", "-u", "--force", "-f"),
}  # fmt: skip

_DANGEROUS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), why)
    for p, why in (
        (
            r"\brm\s+(-[a-zA-Z]*\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(-\S+\s+)*(/|/\*|~|~/|\$HOME)(\s|$)",
            "recursive delete of / or home",
        ),
        (r"\brm\s+(-[a-zA-Z]*\s+)*--no-preserve-root", "rm --no-preserve-root"),
        (r"\bdd\b[^\n]*\bof=/dev/", "dd onto a device"),
        (
            r"\b(curl|wget|fetch)\b[^\n|]*\|\s*(sudo\s+)?(ba|z|da|k)?sh\b",
            "piping a download into a shell",
        ),
        (r"\b(curl|wget)\b[^\n|]*\|\s*(sudo\s+)?python[0-9.]*\b", "piping a download into python"),
        (r":\(\)\s*\{\s*:\|:&\s*\}\s*;", "fork bomb"),
        (r">\s*/dev/(sd|nvme|hd|vd|xvd|mmcblk)", "writing onto a block device"),
        (r"\bchmod\s+(-\S+\s+)*[0-7]*777\s+/(\s|$)", "chmod 777 /"),
        (r"\bchown\s+(-\S+\s+)*\S+\s+/(\s|$)", "chown of /"),
    )
)  # fmt: skip
_REDIRECT_TARGET = re.compile(r"(?<![0-9&])>>?\s*([^\s;&|]+)")


# Programs refused where they would run (a segment's first word, or after a wrapper such as
# `env`/`xargs`), not wherever the word appears: `grep su notes.txt` is harmless.
_REFUSED_PROGRAMS = {
    "sudo": "privilege escalation (sudo/su)",
    "su": "privilege escalation (sudo/su)",
    "doas": "privilege escalation (sudo/su)",
    "pkexec": "privilege escalation (sudo/su)",
    "shutdown": "shutting the machine down",
    "reboot": "shutting the machine down",
    "halt": "shutting the machine down",
    "poweroff": "shutting the machine down",
}
_WRAPPERS = frozenset(
    {"env", "nohup", "time", "exec", "xargs", "command", "builtin", "nice", "timeout", "stdbuf",
     "setsid", "bash", "sh", "-c"}
)  # fmt: skip


def _program_words(segment: str) -> list[str]:
    """The words of a segment that name a program to run (after assignments and wrappers)."""
    try:
        words = shlex.split(segment)
    except ValueError:
        words = segment.split()
    out: list[str] = []
    for word in words:
        if "=" in word and not word.startswith("-"):
            continue  # VAR=value (before the program, or after `env`)
        name = word.rsplit("/", 1)[-1]
        out.append(name)
        if name not in _WRAPPERS and not name.startswith("-") and not name.isdigit():
            break
    return out


def dangerous_reason(command: str) -> str | None:
    """Why this command is refused outright, or None."""
    for pattern, why in _DANGEROUS:
        if pattern.search(command):
            return why
    for segment in segments(command.replace("(", " ").replace(")", " ")):
        for name in _program_words(segment):
            if name in _REFUSED_PROGRAMS:
                return _REFUSED_PROGRAMS[name]
            if name.startswith("mkfs"):
                return "formatting a filesystem (mkfs)"
            if name == "init" and segment.split()[-1:] == ["0"]:
                return "shutting the machine down"
    return None


def redirect_targets(command: str) -> list[str]:
    """Files written by `>` / `>>` (fd duplications such as `2>&1` are not files)."""
    return [t for t in _REDIRECT_TARGET.findall(command) if not t.startswith("&")]


def segments(command: str) -> list[str]:
    """The simple commands of a pipeline/list, stripped, empty ones dropped."""
    return [s.strip() for s in _SEGMENT_SPLIT.split(command) if s.strip()]


def is_safe_read_only(command: str) -> bool:
    """True when every part of `command` only reads (see the module docstring)."""
    if not command.strip() or "$(" in command or "`" in command or "<(" in command:
        return False
    cleaned = _HARMLESS_REDIRECTS.sub(" ", command)
    if ">" in cleaned or "<<" in cleaned:
        return False
    parts = segments(cleaned)
    return bool(parts) and all(_segment_safe(p) for p in parts)


def _segment_safe(segment: str) -> bool:
    try:
        words = shlex.split(segment)
    except ValueError:
        return False
    # Leading VAR=value assignments can change behaviour (PAGER, GIT_*): not safe.
    if not words or "=" in words[0]:
        return False
    name, args = words[0], words[1:]
    if name == "git":
        if not args or args[0] not in SAFE_GIT:
            return False
        # `git branch NAME` / `git tag NAME` create refs; only the listing forms are read-only.
        if args[0] in ("branch", "tag") and any(not a.startswith("-") for a in args[1:]):
            return False
    elif name not in SAFE_COMMANDS:
        return False
    bad = _UNSAFE_FLAGS.get(name, ())
    return not any(a == b or a.startswith(b + "=") for a in args for b in bad)
