"""Auto-trigger: which playbook a user's message asks for, and how sure we are.

Only playbooks with `trigger: auto` or `both` take part. A `trigger-patterns` glob (`*`, `?`,
`[...]`, case-insensitive) that matches the whole message is a strong match: the playbook runs.
A weak match — every word of a pattern appears in the message, but the glob does not match it as
a whole ("could you maybe commit this" against `commit *`) — is only suggested, never run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

from openmono.playbooks._load import Playbook

_WORD = re.compile(r"[a-z0-9][a-z0-9_-]*")


@dataclass(frozen=True)
class TriggerMatch:
    playbook: Playbook
    pattern: str
    strength: Literal["strong", "weak"]


def match_trigger(message: str, playbooks: Iterable[Playbook]) -> TriggerMatch | None:
    """The best match for `message` (strong before weak, in the order given), or None."""
    text = " ".join(message.lower().split())
    weak: TriggerMatch | None = None
    for pb in playbooks:
        if pb.front.trigger not in ("auto", "both"):
            continue
        for pattern in pb.front.trigger_patterns:
            glob = " ".join(pattern.lower().split())
            if fnmatchcase(text, glob):
                return TriggerMatch(pb, pattern, "strong")
            words = _WORD.findall(glob)
            if weak is None and words and set(words) <= set(_WORD.findall(text)):
                weak = TriggerMatch(pb, pattern, "weak")
    return weak
