"""Arguments in a command's or skill's text, as Claude Code writes them.

`$ARGUMENTS` is everything after the name; `$1` .. `$9` are its words (quoted words count as
one, as a shell splits them; unbalanced quotes fall back to splitting at white space), a missing
one is empty. A text that uses none of them gets the arguments appended, so nothing the user
typed is lost.
"""

from __future__ import annotations

import re
import shlex

_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9])")


def expand(template: str, arguments: str) -> str:
    """`template` with the placeholders filled in from `arguments` (see the module docstring)."""
    arguments = arguments.strip()
    if not _PLACEHOLDER.search(template):
        return f"{template}\n\nARGUMENTS: {arguments}" if arguments else template
    try:
        words = shlex.split(arguments)
    except ValueError:
        words = arguments.split()

    def fill(found: re.Match[str]) -> str:
        key = found.group(1)
        if key == "ARGUMENTS":
            return arguments
        index = int(key) - 1
        return words[index] if index < len(words) else ""

    return _PLACEHOLDER.sub(fill, template)
