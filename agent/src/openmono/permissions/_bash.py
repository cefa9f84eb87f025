"""The commands refused outright (destructive, privilege escalation), and "is it read-only".

`dangerous_reason` is a deny-list on purpose: it names what is never allowed, whatever a rule or
an answer says (`rm -rf /`, `sudo`, `mkfs`, a download piped into a shell). It reads the text
loosely, so that no spelling slips past it. What runs *without asking* is the opposite, an
allow-list checked by a real parser (`_readonly`); `is_safe_read_only` is its answer for a
command that will run in the read-only sandbox (the mode guard asks it).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from openmono.permissions._readonly import ReadOnly

_SEGMENT_SPLIT = re.compile(r"\|\||&&|[;|&\n]")

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
    """True when `command` is an allow-listed read-only command (`_readonly`), as it would run
    in the read-only sandbox."""
    return ReadOnly(Path.cwd()).reason(command, sandboxed=True) is None
