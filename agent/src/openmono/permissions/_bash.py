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
        (r"(^|[\s;&|(])(sudo|su|doas|pkexec)(\s|$)", "privilege escalation (sudo/su)"),
        (
            r"\brm\s+(-[a-zA-Z]*\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(-\S+\s+)*(/|/\*|~|~/|\$HOME)(\s|$)",
            "recursive delete of / or home",
        ),
        (r"\brm\s+(-[a-zA-Z]*\s+)*--no-preserve-root", "rm --no-preserve-root"),
        (r"(^|[\s;&|])mkfs(\.\w+)?\b", "formatting a filesystem (mkfs)"),
        (r"\bdd\b[^\n]*\bof=/dev/", "dd onto a device"),
        (
            r"\b(curl|wget|fetch)\b[^\n|]*\|\s*(sudo\s+)?(ba|z|da|k)?sh\b",
            "piping a download into a shell",
        ),
        (r"\b(curl|wget)\b[^\n|]*\|\s*(sudo\s+)?python[0-9.]*\b", "piping a download into python"),
        (r":\(\)\s*\{\s*:\|:&\s*\}\s*;", "fork bomb"),
        (r"(^|[\s;&|])(shutdown|reboot|halt|poweroff|init\s+0)(\s|$)", "shutting the machine down"),
        (r">\s*/dev/(sd|nvme|hd|vd|xvd|mmcblk)", "writing onto a block device"),
        (r"\bchmod\s+(-\S+\s+)*[0-7]*777\s+/(\s|$)", "chmod 777 /"),
        (r"\bchown\s+(-\S+\s+)*\S+\s+/(\s|$)", "chown of /"),
    )
)  # fmt: skip
_REDIRECT_TARGET = re.compile(r"(?<![0-9&])>>?\s*([^\s;&|]+)")


def dangerous_reason(command: str) -> str | None:
    """Why this command is refused outright, or None."""
    for pattern, why in _DANGEROUS:
        if pattern.search(command):
            return why
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
