"""The safety floor: in a task that only reads, a call that would write is refused (not in yolo).

Whether a task only reads is decided from the user's own message of the turn (never from text a
tool or a web page returned), by `read_only_task`: simple, deterministic and conservative. It
says "read-only" only when both hold:

1. the message opens as a question or a request to read: its first word (after `please`) is a
   question word (`what`, `which`, `where`, `how`, `is`, `does`, `can`, ...; contracted too,
   `what's`, `doesn't`, or after a preposition, "In which file") or a reading verb (`read`,
   `show`, `list`, `find`, `explain`, `count`, ...);
2. no word of it asks for a change: `create`, `write`, `edit`, `change`, `fix`, `rename`, `add`,
   `delete`, `run`, `install`, `commit`, ... in any inflection (`changed`, `writing`, `wrote`);
   paths and file names aside, which name no action (`tests/fixtures`, `build.sh`).
   Mentioning a build or a test counts (answering may mean running them). Two verbs that are
   also nouns or participles (`set`, `make`) count only after a word that makes them a request
   (`you set`, `please make`, `and set`, `to make`), so "What port does server.ini set?" reads.

Anything else is not read-only: a slash command, an answer such as "yes, go ahead", an
imperative that is not a reading verb, a question that also asks for a change ("Where is f
used? Then rename it"), even "don't change anything" (the floor would rather miss a read-only
task than refuse a change the user asked for). `bench/_eval_tasks.py`'s write tasks are a unit
test of this: none of them may read as read-only.

`asks_change` is the other direction, for `llm.tool_repick` (a change request that has only read
is asked its action again): positive evidence that the message asks for a change. One of its
sentences (paths and file names left out: "deploy/main.tf" names no action) does not open as a
wh-question and has a change word of rule 2 whose word before it is not a subject that makes it a
description ("the region we deploy to"). A message that asks for a change is never read-only.

`writes_call` is what counts as a write: a tool that declares `writes` (FileWrite, FileEdit,
...), or a shell command that is not one of the read-only commands (`is_safe_read_only`, the
same test ask mode applies).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from openmono_contracts.toolfacts import ToolFacts

from openmono.permissions._bash import is_safe_read_only

_OPENERS = frozenset({
    "what", "which", "who", "whom", "whose", "where", "when", "why", "how", "is", "are", "was",
    "were", "am", "does", "do", "did", "has", "have", "had", "can", "could", "would", "will",
    "should", "may", "might", "shall", "read", "show", "list", "find", "search", "grep", "look",
    "explain", "describe", "summarize", "summarise", "tell", "count", "display", "view", "give",
    "locate", "identify", "compare",
})  # fmt: skip
_CHANGE = [
    "create", "write", "edit", "change", "modify", "update", "replace", "rename", "delete",
    "remove", "add", "insert", "append", "fix", "patch", "refactor", "implement", "generate",
    "install", "uninstall", "upgrade", "downgrade", "run", "execute", "exec", "launch", "start",
    "stop", "kill", "restart", "commit", "push", "merge", "rebase", "checkout", "revert", "reset",
    "undo", "move", "copy", "save", "store", "put", "touch", "mkdir", "rm", "mv", "cp", "chmod",
    "chown", "format", "reformat", "apply", "clean", "deploy", "migrate", "convert", "rewrite",
    "overwrite", "truncate", "download", "upload", "init", "initialize", "configure", "enable",
    "disable", "bump", "sort", "split", "scaffold", "compile", "translate", "drop", "build",
    "test",
]  # fmt: skip
# verbs that are also nouns or participles ("does it set?", "made by"): a change only when the
# word before them makes them a request
_WEAK = ["set", "make"]
_REQUEST_BEFORE = frozenset({
    "you", "please", "to", "and", "then", "also", "now", "just", "lets", "let's", "i'll", "we'll",
})  # fmt: skip
_IRREGULAR = {
    "wrote": "write",
    "written": "write",
    "ran": "run",
    "built": "build",
    "undone": "undo",
}
_WORD = re.compile(r"[a-z']+")
# "what's", "where're", "isn't": the question word under the contraction opens the message
_CONTRACTION = re.compile(r"'(?:s|re|ve|d|ll|m)$")
_NOT = {"can't": "can", "won't": "will", "shan't": "shall"}
# "In which file ...", "From where ...": a preposition before the question word
_PREPOSITIONS = frozenset({
    "in", "on", "at", "from", "for", "to", "by", "with", "of", "into", "inside", "within", "under",
})  # fmt: skip


def _inflections(verb: str) -> set[str]:
    """`verb` with every regular ending (over-generating is harmless: it only makes the test
    say "not read-only" more often)."""
    stem = verb[:-1] if verb.endswith("e") else verb
    forms = {verb, verb + "s", verb + "es", verb + "ed", verb + "d", stem + "ing", verb + "ing"}
    forms |= {verb + verb[-1] + "ed", verb + verb[-1] + "ing"}  # doubled: stopped, setting
    return forms


# each form of a change verb -> the verb
_CHANGE_FORMS = {form: verb for verb in _CHANGE for form in _inflections(verb)} | _IRREGULAR
_WEAK_FORMS = {form: verb for verb in _WEAK for form in _inflections(verb)} | {"made": "make"}
CHANGE_VERBS = (*_CHANGE, *_WEAK)
# a path or file name names no action ("deploy/main.tf", "build.sh")
_PATH = re.compile(r"\S*(?:/|\w\.\w)\S*")


def _text(message: str) -> str | None:
    """`message` as the rules read it: lower case, straight apostrophes, paths and file names
    left out; None for an empty message or a slash command."""
    text = message.strip().lower().replace("\u2019", "'")
    if not text or text.startswith("/"):
        return None
    return _PATH.sub(" ", text)


def _verb_at(words: list[str], i: int) -> str | None:
    """The change verb `words[i]` is (rule 2: a weak one only after a word that makes it a
    request), or None."""
    word = words[i]
    if word in _CHANGE_FORMS:
        return _CHANGE_FORMS[word]
    if word in _WEAK_FORMS and (i == 0 or words[i - 1] in _REQUEST_BEFORE):
        return _WEAK_FORMS[word]
    return None


def read_only_task(message: str) -> bool:
    """Does the user's `message` only ask to read, list or explain (see the module docstring)?"""
    text = _text(message)
    if text is None:
        return False
    words = _WORD.findall(text)
    while words and words[0] == "please":
        words = words[1:]
    if len(words) > 1 and words[0] in _PREPOSITIONS and _uncontracted(words[1]) in _OPENERS:
        words = words[1:]
    if not words or _uncontracted(words[0]) not in _OPENERS:
        return False
    return all(_verb_at(words, i) is None for i in range(len(words)))


# a sentence that opens with one asks about a change ("How do I rename it?"), not for one
_WH = frozenset({"what", "which", "who", "whom", "whose", "where", "when", "why", "how"})
# a change word after one describes ("the region we deploy to", "the script it runs")
_DESCRIBING = frozenset({"i", "we", "they", "it", "he", "she", "that", "which", "who"})
_SENTENCE = re.compile(r"[.?!;]+(?:\s+|$)|\n+")


def asks_change(message: str) -> bool:
    """Does the user's `message` ask for a change? Positive evidence, unlike `not
    read_only_task`: one of its sentences that does not open as a wh-question has a change word
    of rule 2 (module docstring) that no subject before it turns into a description. "Where is f
    used? Then rename it" asks; "yes, go ahead", "tmp should be called buffer" and "which region
    do we deploy to?" do not."""
    return bool(change_verbs(message))


def change_verbs(message: str) -> list[str]:
    """The change verbs (of `CHANGE_VERBS`) `message` asks for, in its order (`asks_change`)."""
    text = _text(message)
    if text is None:
        return []
    return [verb for sentence in _SENTENCE.split(text) for verb in _asked(_WORD.findall(sentence))]


def _asked(words: list[str]) -> list[str]:
    if len(words) > 1 and words[0] in _PREPOSITIONS:
        words = words[1:]
    if not words or _uncontracted(words[0]) in _WH:
        return []
    verbs = [(i, _verb_at(words, i)) for i in range(len(words))]
    return [verb for i, verb in verbs if verb and (i == 0 or words[i - 1] not in _DESCRIBING)]


def _uncontracted(word: str) -> str:
    """`word` without its contraction: "what's" -> "what", "doesn't" -> "does"."""
    if word.endswith("n't"):
        return _NOT.get(word, word[:-3])
    return _CONTRACTION.sub("", word)


def writes_call(facts: ToolFacts, args: Mapping[str, Any]) -> bool:
    """Would this call change files: a tool that writes, or a shell command not read-only?"""
    if facts.writes:
        return True
    if facts.shell_param:
        return not is_safe_read_only(str(args.get(facts.shell_param, "")))
    return False


FLOOR_MESSAGE = (
    "{tool} was not run: the user's request asks to read, list or explain, not to change "
    "anything, so no file was changed. Answer from what you can read. If a change is needed, "
    "say which change and ask the user to ask for it."
)
