"""Instructions that ride in a tool's result: the first call touching a file brings what applies.

`Attachments` knows, per conversation, what was already shown: a subfolder's notes, a rule
(a glob rule matching the file; an always rule of a subfolder's rule folder) come once, with the
first successful call that names a path they are about (the call's path arguments, by its facts),
and not again until the conversation is compacted (the main conversation's `generation` moved:
what was shown may be gone) — a sub-agent's conversation (`openmono.llm.current_conversation`)
keeps its own account, so a note the parent saw still reaches the child.

`WithInstructions` is the worker's toolset seen through that: results get the text appended, and
read-only calls carry the folders of loaded skills that lie outside the workspace
(`ToolRequest.read_roots`), so the read tools can open a skill's files (`_tool`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from openmono_contracts import ToolRequest, ToolResult
from openmono_contracts.toolfacts import ToolFacts

from openmono.instructions._catalog import Instructions
from openmono.instructions._notes import Note
from openmono.instructions._prompt import rule_text
from openmono.instructions._rules import Rule
from openmono.llm import current_conversation
from openmono.loop import EventSink, OfferedTool, Toolset
from openmono.permissions import call_paths

ITEM_CHARS = 8_000
TOTAL_CHARS = 16_000


def render(ins: Instructions, items: list[Note | Rule], target: str) -> str:
    """The text a result gets for `items` (the first path touched: `target`)."""
    parts = [f"[Instructions for {target} and files like it, shown once:]"]
    left = TOTAL_CHARS
    for item in items:
        limit = min(ITEM_CHARS, max(left, 0))
        if isinstance(item, Note):
            where = item.folder.relative_to(ins.workspace).as_posix()
            text = item.text if len(item.text) <= limit else item.text[:limit] + "\n[... cut]"
            parts.append(f"## Notes {item.label} (for the files under {where}/)\n{text}")
            left -= len(item.text)
        else:
            parts.append(rule_text(item, f"rule {ins.shown(item.file)}: {item.why()}", limit))
            left -= len(item.body)
    return "\n\n".join(parts)


class Attachments:
    """What rode already, per conversation (see the module docstring)."""

    def __init__(
        self, ins: Instructions, main: str, generation: Callable[[], int] = lambda: 0
    ) -> None:
        self.ins = ins
        self.main = main
        self._generation = generation
        self._seen = generation()
        self._shown: dict[str, set[Path]] = {}

    def delivered(self) -> set[Path]:
        """The files whose text the main conversation holds now."""
        self._check()
        return set(self._shown.get(self.main, ()))

    def _check(self) -> None:
        now = self._generation()
        if now != self._seen:
            self._seen = now
            self._shown.pop(self.main, None)

    def for_call(self, request: ToolRequest, facts: ToolFacts) -> str | None:
        """The text to add to this call's result, or None (nothing new applies)."""
        paths = call_paths(facts, request.params, self.ins.workspace)
        if not paths:
            return None
        self._check()
        shown = self._shown.setdefault(current_conversation() or self.main, set())
        items: list[Note | Rule] = []
        target = ""
        for path in paths:
            for item in self.ins.applicable(path):
                key = item.path if isinstance(item, Note) else item.file
                if key not in shown:
                    shown.add(key)
                    items.append(item)
                    target = target or self.ins.shown(path)
        return render(self.ins, items, target) if items else None


class WithInstructions:
    """A toolset (the worker's) whose results carry what applies to the files they touch."""

    def __init__(
        self, inner: Toolset, attachments: Attachments, read_roots: Callable[[], list[str]]
    ) -> None:
        self.inner = inner
        self.attachments = attachments
        self.read_roots = read_roots

    def tools(self) -> Mapping[str, OfferedTool]:
        return self.inner.tools()

    async def call(self, request: ToolRequest, emit: EventSink) -> ToolResult:
        offered = self.inner.tools().get(request.tool)
        facts = offered.facts if offered is not None else ToolFacts()
        roots = self.read_roots()
        if roots and facts.read_only:
            request = request.model_copy(update={"read_roots": roots})
        result = await self.inner.call(request, emit)
        if not result.ok:
            return result
        text = self.attachments.for_call(request, facts)
        if text is None:
            return result
        output = f"{result.output}\n\n{text}" if result.output else text
        return result.model_copy(update={"output": output})
