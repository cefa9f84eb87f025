"""FileEdit: exact string replacement, one edit or several applied all-or-nothing.

Each `old_string` must occur exactly once unless `replace_all` is set; edits apply in order to the
result of the previous one, and if any fails nothing is written. A file with CRLF line endings is
matched with `\\n` in the strings too (the replacement gets CRLF). An empty `old_string` creates a
file that does not exist yet (or fills an empty one). The write is atomic and keeps the file's mode.
"""

from __future__ import annotations

from pathlib import Path

from openmono_contracts.atomicfile import atomic_write
from pydantic import BaseModel, ConfigDict, Field, model_validator

from openmono_worker.codeintel import edit_diagnostics
from openmono_worker.errors import ToolError
from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome
from openmono_worker.tools._text import numbered, read_text

_SNIPPET_CONTEXT = 3
_SNIPPET_MAX_LINES = 20


class Edit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    old_string: str = Field(description="Exact text to replace (must be unique in the file).")
    new_string: str = Field(description="Replacement text.")
    replace_all: bool = Field(default=False, description="Replace every occurrence.")


class Params(BaseModel):
    # the two forms in the schema too, so a grammar (and a model reading it) can keep to one: the
    # 135M model wrote a new_string and no old_string four times in a row in two held-out tasks
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "anyOf": [{"required": ["old_string", "new_string"]}, {"required": ["edits"]}]
        },
    )

    file_path: str = Field(
        min_length=1,
        description="File to edit: absolute (inside the workspace) or relative to the workspace.",
    )
    old_string: str | None = Field(
        default=None,
        description="Exact text to replace; must occur once unless replace_all. Empty: new file.",
    )
    new_string: str | None = Field(default=None, description="Replacement text.")
    replace_all: bool = Field(default=False, description="Replace every occurrence of old_string.")
    edits: list[Edit] | None = Field(
        default=None,
        description="Several edits applied in order, all or nothing (instead of old/new_string).",
    )

    @model_validator(mode="after")
    def _one_form(self) -> Params:
        single = self.old_string is not None or self.new_string is not None
        if self.edits is not None:
            if single:
                raise ValueError("give either old_string/new_string or edits, not both")
            if not self.edits:
                raise ValueError("edits is empty")
        elif self.old_string is None or self.new_string is None:
            raise ValueError("old_string and new_string are both required (or use edits)")
        return self

    def all_edits(self) -> list[Edit]:
        """The edits to apply, whichever form was used (the validator made sure one was)."""
        if self.edits is not None:
            return self.edits
        single = Edit(
            old_string=self.old_string or "",
            new_string=self.new_string or "",
            replace_all=self.replace_all,
        )
        return [single]


def apply_edit(text: str, edit: Edit, shown: str) -> tuple[str, int, int]:
    """Apply one edit; returns the new text, the replacement count and where the first one was."""
    old, new = edit.old_string, edit.new_string
    if old == new:
        raise ToolError("old_string and new_string are identical; nothing to change")
    if old == "":
        raise ToolError(f"old_string is empty but {shown} already has content")
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\r\n" not in old and "\n" in old:
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        count = text.count(old)
    if count == 0:
        hint = ""
        if old.strip() and old.strip() in text:
            hint = " (it does occur with different leading/trailing whitespace)"
        raise ToolError(f"old_string not found in {shown}{hint}; read the file and copy it exactly")
    if count > 1 and not edit.replace_all:
        raise ToolError(
            f"old_string occurs {count} times in {shown}; add surrounding lines to make it "
            "unique, or set replace_all"
        )
    at = text.index(old)
    replaced = text.replace(old, new) if edit.replace_all else text.replace(old, new, 1)
    return replaced, count if edit.replace_all else 1, at


def snippet(text: str, at: int, new_len: int) -> str:
    """The edited region with a few lines around it, numbered."""
    lines = text.split("\n")
    first = text.count("\n", 0, at)
    last = text.count("\n", 0, at + new_len)
    lo = max(0, first - _SNIPPET_CONTEXT)
    hi = min(len(lines), last + _SNIPPET_CONTEXT + 1, lo + _SNIPPET_MAX_LINES)
    return numbered([line.rstrip("\r") for line in lines[lo:hi]], lo + 1)


class FileEdit(Tool[Params]):
    name = "FileEdit"
    description = (
        "Replace exact text in a file. old_string must match the file exactly (whitespace "
        "included) and be unique unless replace_all. Use edits for several changes at once: "
        "they apply in order, all or nothing. An empty old_string creates a new file."
    )
    path_params = ("file_path",)
    writes = True
    core = True
    kind = "edit"
    params_model = Params

    def execute(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        path = ctx.resolve(params.file_path)
        shown = ctx.show(path)
        edits = params.all_edits()
        if len(edits) == 1 and edits[0].old_string == "" and not path.exists():
            return self._write(ctx, path, shown, edits[0].new_string, "Created", "")
        text = read_text(path, shown)
        if len(edits) == 1 and edits[0].old_string == "" and text == "":
            return self._write(ctx, path, shown, edits[0].new_string, "Filled empty file", "")
        total = 0
        at = new_len = 0
        for i, edit in enumerate(edits, start=1):
            try:
                text, count, at = apply_edit(text, edit, shown)
            except ToolError as exc:
                if len(edits) == 1:
                    raise
                raise ToolError(f"edit {i} of {len(edits)}: {exc}; no edit was applied") from exc
            total += count
            new_len = len(edit.new_string)
        what = f"{total} replacement{'s' if total != 1 else ''}"
        if len(edits) > 1:
            what += f" from {len(edits)} edits"
        detail = f"{what}\n{snippet(text, at, new_len)}"
        return self._write(ctx, path, shown, text, "Edited", detail)

    @staticmethod
    def _write(
        ctx: ToolContext, path: Path, shown: str, text: str, verb: str, detail: str
    ) -> ToolOutcome:
        with edit_diagnostics(ctx.workspace, [path], trusted=ctx.trusted) as check:
            try:
                atomic_write(path, text)
            except OSError as exc:
                raise ToolError(f"cannot write {shown}: {exc.strerror or exc}") from exc
        summary = f"{verb} {shown}" + (f": {detail}" if detail else "")
        return ToolOutcome(summary + check.report())


TOOL = FileEdit()
