"""ApplyPatch: apply a unified diff (one or many files, create / delete / rename), all or nothing.

Every file is patched in memory first; if any hunk fails, nothing is written. Then files are
written one by one (each atomically); should a write fail midway, the files already written are
restored from their saved contents. `dry_run` stops after the in-memory step and reports what would
change. Paths in the diff are relative to the workspace (git's a/ b/ prefixes are stripped).
"""

from __future__ import annotations

import contextlib
import stat
from dataclasses import dataclass
from pathlib import Path

from openmono_contracts.atomicfile import atomic_write
from pydantic import BaseModel, ConfigDict, Field

from openmono_worker.codeintel import edit_diagnostics
from openmono_worker.errors import ToolError
from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome
from openmono_worker.tools._patch import FilePatch, apply_hunks, parse_patch
from openmono_worker.tools._text import read_text


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    patch: str = Field(
        min_length=1,
        description="A unified diff ('--- a/path', '+++ b/path', '@@ ... @@' hunks); "
        "/dev/null as old side creates a file, as new side deletes it.",
    )
    dry_run: bool = Field(default=False, description="Check that it applies; change nothing.")


@dataclass
class _Change:
    """The planned state of one path: new text, or None to delete it."""

    path: Path
    shown: str
    new_text: str | None
    summary: str


class ApplyPatch(Tool[Params]):
    name = "ApplyPatch"
    description = (
        "Apply a unified diff to files in the workspace (several files, new and deleted files "
        "included). All or nothing: if one hunk does not apply, no file changes. dry_run=true "
        "only checks."
    )
    diff_params = ("patch",)
    writes = True
    kind = "edit"
    params_model = Params

    def execute(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        patches = parse_patch(params.patch)
        state: dict[Path, str | None] = {}  # what each touched path holds after earlier patches
        changes: dict[Path, _Change] = {}
        notes: list[str] = []
        for fp in patches:
            ctx.check_cancelled()
            notes.extend(self._plan(fp, ctx, state, changes))
        lines = [c.summary for c in changes.values()] + notes
        if params.dry_run:
            return ToolOutcome("Dry run: the patch applies cleanly.\n" + "\n".join(lines))
        written = [c.path for c in changes.values() if c.new_text is not None]
        with edit_diagnostics(ctx.workspace, written, trusted=ctx.trusted) as check:
            self._commit(list(changes.values()))
        return ToolOutcome("Applied the patch:\n" + "\n".join(lines) + check.report())

    @staticmethod
    def _current(path: Path, shown: str, state: dict[Path, str | None]) -> str | None:
        if path in state:
            return state[path]
        if path.is_dir():
            raise ToolError(f"{shown} is a directory")
        return read_text(path, shown) if path.exists() else None

    def _plan(
        self,
        fp: FilePatch,
        ctx: ToolContext,
        state: dict[Path, str | None],
        changes: dict[Path, _Change],
    ) -> list[str]:
        old = ctx.resolve(fp.old_path) if fp.old_path is not None else None
        new = ctx.resolve(fp.new_path) if fp.new_path is not None else None
        added, removed = fp.counts()
        if old is None and new is not None:  # create
            shown = ctx.show(new)
            if self._current(new, shown, state) is not None:
                raise ToolError(f"{shown} already exists; the patch wants to create it")
            text, notes = apply_hunks("", fp)
            self._set(state, changes, new, shown, text, f"created {shown} (+{added})")
            return notes
        if old is None:
            raise ToolError("a file header with /dev/null on both sides")
        shown_old = ctx.show(old)
        current = self._current(old, shown_old, state)
        if current is None:
            raise ToolError(f"{shown_old} does not exist; the patch wants to change it")
        text, notes = apply_hunks(current, fp)
        if new is None:  # delete
            if text.strip():
                raise ToolError(f"{shown_old}: the deletion hunk does not cover the whole file")
            self._set(state, changes, old, shown_old, None, f"deleted {shown_old} (-{removed})")
            return notes
        if new != old:  # rename (with or without changes)
            shown_new = ctx.show(new)
            if self._current(new, shown_new, state) is not None:
                raise ToolError(f"{shown_new} already exists; the patch wants to rename onto it")
            self._set(state, changes, old, shown_old, None, f"renamed {shown_old} -> {shown_new}")
            summary = f"created {shown_new} from {shown_old} (+{added} -{removed})"
            self._set(state, changes, new, shown_new, text, summary)
            return notes
        hunks = len(fp.hunks)
        summary = f"modified {shown_old} (+{added} -{removed}, {hunks} hunk{'s' * (hunks != 1)})"
        self._set(state, changes, old, shown_old, text, summary)
        return notes

    @staticmethod
    def _set(
        state: dict[Path, str | None],
        changes: dict[Path, _Change],
        path: Path,
        shown: str,
        text: str | None,
        summary: str,
    ) -> None:
        state[path] = text
        earlier = changes.get(path)
        if earlier is not None:
            summary = f"{earlier.summary}; then {summary}"
        changes[path] = _Change(path, shown, text, summary)

    @staticmethod
    def _commit(changes: list[_Change]) -> None:
        """Write every change; on a failure, put back what was already written."""
        saved: list[tuple[Path, bytes | None, int | None]] = []
        try:
            for change in changes:
                path = change.path
                if path.exists():
                    saved.append((path, path.read_bytes(), stat.S_IMODE(path.stat().st_mode)))
                else:
                    saved.append((path, None, None))
                if change.new_text is None:
                    path.unlink(missing_ok=True)
                else:
                    atomic_write(path, change.new_text)
        except OSError as exc:
            for path, data, mode in reversed(saved):
                with contextlib.suppress(OSError):
                    if data is None:
                        path.unlink(missing_ok=True)
                    else:
                        path.write_bytes(data)
                        if mode is not None:
                            path.chmod(mode)
            raise ToolError(f"writing the patch failed ({exc}); no file was changed") from exc


TOOL = ApplyPatch()
