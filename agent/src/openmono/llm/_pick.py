"""The kind of action first, then the call (`llm.tool_pick`, issue 42): a two-step prompted call.

Under the one-step grammar a small model decides between prose and a call at its first token,
with the whole system prompt and the worked examples in front of it: the bundled 135M model often
answers "port 8080" at once, or calls FileRead with a pattern where Grep was wanted. With
`two_step`, a request that opens a turn (the user's words are the last message) is first asked,
in a short conversation of its own, which action it needs:

    step 1  system: one line per offered tool, each under a plain verb (`read`, `search`, `run`,
            ...) and `answer` for no tool; one example turn per offered tool (a worked example's
            request -> its verb) and a plain question -> `answer`, the scene nearest the request
            last; then the request. A grammar allows only those words (a few tokens).
    step 2  the usual prompted request (`_prompted`), the picked tool's worked example last, and a
            grammar that allows only calls to the picked tool (no prose: the pick said a tool is
            needed). `answer`, or a pick that failed (an HTTP error, an empty reply), leaves the
            request as it was: prose or any offered call.

Verbs, not tool names: asked to reply with a name, the 135M model said FileRead or FileWrite to
almost every request (and never "none"); with verbs the request's own words ("run", "list",
"create") point at the choice. Measured in the eval (docs/agent-eval.md). Only the turn's first
request is picked for: once a result is in, the model decides between answering and another call
as before, with one exception (`llm.tool_repick`):

    after_read  a request that asks for a change (`permissions.asks_change`: "Fix the typo in
                mail.py", "Delete old.tmp"), whose turn has so far only read, is asked again
                when a result comes in. The 135M model picked `read` for six of the held-out
                change requests, read the file, then described the change in prose instead of
                making it. Offered every tool that changes something, it then picked `run` for
                most edits (with no scene word in common the shell's example came last); offered
                the writers, `answer` (after the examples of questions that need no tool). So
                the request's first change verb says what is offered (`MADE_WITH`: "fix" is a
                file's change, made among the tools that write files; "delete" a command, among
                the shells), that tool's example goes last, no question is shown, and `answer`
                stays allowed. Once a call of the turn changed something, or tried to, nothing
                is asked again.

Both requests' tokens are counted (one `Usage`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from openmono.llm._examples import PLAIN, chosen_scenes
from openmono.llm._grammar import literal
from openmono.llm._intent import request_at
from openmono.llm._messages import ChatMessage, ToolSpec
from openmono.llm._prompted import tool_line
from openmono.permissions import change_verbs

ToolPick = Literal["off", "two_step"]
NONE = "answer"
PICK_MAX_TOKENS = 8

# the core tools' verbs; any other tool is offered under its own name
VERBS: dict[str, tuple[str, str]] = {
    "FileRead": ("read", "show what a file says"),
    "Grep": ("search", "find which file contains a word"),
    "Glob": ("find", "find files by name or extension"),
    "ListDirectory": ("list", "list a folder"),
    "Bash": ("run", "run a shell command"),
    "FileWrite": ("write", "create or overwrite a file"),
    "FileEdit": ("edit", "change text in a file"),
}
_ASK = "Choose the action each request needs. Reply with one word:\n{lines}\n- {none}: {plain}"
_PLAIN2 = "Who wrote the novel Moby-Dick?"
_PLAIN = "no file or command needed, answer from what you know"


# Which tool each change verb (`permissions.CHANGE_VERBS`) is usually made with.
MADE_WITH: dict[str, tuple[str, ...]] = {
    "FileEdit": (
        "edit", "change", "modify", "update", "replace", "rename", "fix", "patch", "refactor",
        "rewrite", "insert", "append", "format", "reformat", "bump", "convert", "translate",
        "configure", "enable", "disable", "sort", "set",
    ),
    "FileWrite": (
        "create", "write", "add", "generate", "implement", "save", "store", "put", "scaffold",
        "overwrite", "init", "initialize", "make",
    ),
    "Bash": (
        "run", "execute", "exec", "launch", "start", "stop", "kill", "restart", "install",
        "uninstall", "upgrade", "downgrade", "commit", "push", "merge", "rebase", "checkout",
        "revert", "reset", "undo", "move", "copy", "touch", "mkdir", "rm", "mv", "cp", "chmod",
        "chown", "clean", "deploy", "migrate", "download", "upload", "compile", "build", "test",
        "delete", "remove", "drop", "truncate", "split", "apply",
    ),
}  # fmt: skip
_TOOL_OF = {verb: tool for tool, verbs in MADE_WITH.items() for verb in verbs}


@dataclass(frozen=True)
class Ask:
    """What step 1 is asked: about `request`, among `tools`, `last`'s example nearest, with the
    examples of questions that need no tool or (`plain` False) without."""

    request: str
    tools: list[ToolSpec]
    last: str | None = None
    plain: bool = True


def opens_turn(messages: Sequence[ChatMessage]) -> str | None:
    """The request when the user's words are the last message (a fresh turn), else None: after a
    tool result, or after the loop's own instruction, the model goes on as before."""
    if not messages:
        return None
    last = messages[-1]
    if last.role != "user" or last.from_loop or not last.content:
        return None
    return last.content


def after_read(messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> Ask | None:
    """For `after_read`: the request and the tools that change something, when a result just
    came in for a request that asks for a change and no call of the turn changed anything yet;
    else None (the model goes on as before)."""
    start = request_at(messages)
    if start is None or messages[-1].role != "tool":
        return None
    changers = [t for t in tools if t.writes or t.shell]
    names = {t.name for t in changers}
    if any(c.name in names for m in messages[start + 1 :] for c in m.tool_calls):
        return None
    request = messages[start].content or ""
    asked = change_verbs(request)
    if not asked:
        return None
    made_with = [_TOOL_OF[v] for v in asked if _TOOL_OF.get(v) in names]
    if not made_with:  # a mode that offers no such tool (plan: the shell alone): nothing to ask
        return None
    tool = next(t for t in changers if t.name == made_with[0])
    # a file's change among the tools that write files, a command's among the shells: offered
    # the shell for "Fix the typo in mail.py", the 135M model ran a command every time
    kind = [t for t in changers if t.shell == tool.shell]
    return Ask(request, kind, tool.name, plain=False)


def verbs(tools: Sequence[ToolSpec]) -> dict[str, ToolSpec]:
    """The word step 1 may answer for each tool (a core tool's verb, else its name)."""
    out: dict[str, ToolSpec] = {}
    for tool in tools:
        verb = VERBS.get(tool.name, (tool.name, ""))[0]
        out[verb if verb not in out and verb != NONE else tool.name] = tool
    return out


def pick_messages(
    tools: Sequence[ToolSpec], request: str, last: str | None = None, plain: bool = True
) -> list[ChatMessage]:
    """Step 1's conversation: the choice asked of the model for `request` among `tools` (`last`:
    the tool whose example goes nearest the request, whatever the words say; `plain`: with the
    examples of questions that need no tool)."""
    words = verbs(tools)
    lines = "\n".join(
        f"- {w}: {VERBS[t.name][1]}" if t.name in VERBS else tool_line(t).replace(t.name, w, 1)
        for w, t in words.items()
    )
    said = {t.name: w for w, t in words.items()}
    out = [ChatMessage(role="system", content=_ASK.format(lines=lines, none=NONE, plain=_PLAIN))]
    scenes = chosen_scenes(tools, request, limit=len(tools), last=last)
    for i, (name, scene) in enumerate(scenes):
        if i == 1 and plain:  # as in the worked examples: the plain question between, not at an end
            out += [
                ChatMessage(role="user", content=PLAIN[0]),
                ChatMessage(role="assistant", content=NONE),
            ]
        out += [
            ChatMessage(role="user", content=scene.request),
            ChatMessage(role="assistant", content=said[name]),
        ]
        if i == len(scenes) - 3 and plain:
            # one plain question was not enough: the 135M model picked `read` for "What is 12
            # plus 30?" and "What is the capital of France?"; with a second, `answer` for both
            out += [
                ChatMessage(role="user", content=_PLAIN2),
                ChatMessage(role="assistant", content=NONE),
            ]
    if len(scenes) < 2 and plain:
        out += [
            ChatMessage(role="user", content=PLAIN[0]),
            ChatMessage(role="assistant", content=NONE),
        ]
    out.append(ChatMessage(role="user", content=request))
    return out


def pick_grammar(tools: Sequence[ToolSpec]) -> str:
    """Only an offered tool's word, or `answer`."""
    words = [literal(w) for w in verbs(tools)] + [literal(NONE)]
    return f"root ::= {' | '.join(words)}\n"


def picked(text: str, tools: Sequence[ToolSpec]) -> ToolSpec | None:
    """The tool step 1 named (None: `answer`, or a word no offered tool has)."""
    return verbs(tools).get(text.strip())
