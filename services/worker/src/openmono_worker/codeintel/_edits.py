"""Diagnostics after an edit: the errors an edit introduced, for the tool result of the edit.

    with edit_diagnostics(ctx.workspace, [path], trusted=ctx.trusted) as check:
        atomic_write(path, text)
    return ToolOutcome(summary + check.report())

Before the write, the hook has the file's current text analysed (free when the server already
has that exact text); after it, the new text; the report lists the errors of the new text that
the old one did not have, matched by code and message (not position: an edit moves lines), at
most `edit_max_errors` of them plus a count of the rest. The whole thing is bounded by
`edit_wait_s` and runs its server work in a helper thread, so a cold or stuck server costs the
edit at most that long and never fails it: the worst case is a note saying the check was skipped.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types as lsp

from openmono_worker.codeintel._errors import CodeIntelError, NeedsTrust, NoServer
from openmono_worker.codeintel._format import format_diagnostic
from openmono_worker.codeintel._languages import language_of
from openmono_worker.codeintel._pool import server_for
from openmono_worker.codeintel._server import Diagnostics, LanguageServer
from openmono_worker.settings import codeintel_settings
from openmono_worker.workspace import display_path

log = logging.getLogger(__name__)

_HELPER = ThreadPoolExecutor(max_workers=2, thread_name_prefix="lsp-edit")


def _key(d: lsp.Diagnostic) -> tuple[str, str]:
    return (str(d.code or ""), d.message)


def new_errors(
    before: Sequence[lsp.Diagnostic], after: Sequence[lsp.Diagnostic]
) -> list[lsp.Diagnostic]:
    """Errors in `after` beyond those `before` had, by (code, message) count; in file order."""
    errors = [d for d in after if d.severity == lsp.DiagnosticSeverity.Error]
    had = Counter(_key(d) for d in before if d.severity == lsp.DiagnosticSeverity.Error)
    now = Counter(_key(d) for d in errors)
    fresh: list[lsp.Diagnostic] = []
    old_lines = {(d.range.start.line, _key(d)) for d in before}
    extra = {k: n - had[k] for k, n in now.items() if n > had[k]}
    # Of several identical errors, the ones at lines the old text did not have them at are new.
    ordered = sorted(
        errors, key=lambda d: ((d.range.start.line, _key(d)) in old_lines, d.range.start.line)
    )
    for d in ordered:
        k = _key(d)
        if extra.get(k, 0) > 0:
            fresh.append(d)
            extra[k] -= 1
    return sorted(fresh, key=lambda d: (d.range.start.line, d.range.start.character))


@dataclass
class _File:
    path: Path
    server: LanguageServer
    before: Diagnostics | None = None


@dataclass
class EditCheck:
    """The files an edit touches that have a server, and what was found about them."""

    workspace: Path
    files: list[_File] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    def report(self) -> str:
        """Text to append to the edit's result (empty when the edit introduced no errors)."""
        return ("\n\n" + "\n".join(self.lines)) if self.lines else ""


def _analyse(server: LanguageServer, path: Path, text: str, timeout_s: float) -> Diagnostics | None:
    version = server.sync(path, text)
    return server.diagnostics(path, version, timeout_s)


def _before(server: LanguageServer, path: Path, deadline: float) -> Diagnostics | None:
    text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
    if text is None:
        return Diagnostics(0, ())  # a new file had no errors
    server.notice_changes()
    return _analyse(server, path, text, max(0.0, deadline - time.monotonic()))


def _after(server: LanguageServer, path: Path, deadline: float) -> Diagnostics | None:
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8", errors="replace")
    return _analyse(server, path, text, max(0.0, deadline - time.monotonic()))


Phase = Callable[[LanguageServer, Path, float], Diagnostics | None]


def _bounded(fn: Phase, deadline: float, server: LanguageServer, path: Path) -> Diagnostics | None:
    future = _HELPER.submit(fn, server, path, deadline)
    try:
        result = future.result(timeout=max(0.0, deadline - time.monotonic()) + 0.05)
    except FutureTimeout:
        return None
    except (CodeIntelError, OSError) as exc:
        log.info("edit diagnostics skipped: %s", exc)
        return None
    return result


@contextlib.contextmanager
def edit_diagnostics(
    workspace: Path, paths: Sequence[Path], *, trusted: bool
) -> Iterator[EditCheck]:
    """Wrap the write of `paths` (resolved, inside `workspace`); see the module docstring. A
    server that would run the code of a workspace not `trusted` is not started (said once)."""
    check = EditCheck(workspace)
    settings = codeintel_settings()
    if not settings.edit_diagnostics:
        yield check
        return
    deadline = time.monotonic() + settings.edit_wait_s
    untrusted: list[str] = []
    for path in paths:
        if language_of(path) is None:
            continue
        try:
            server = server_for(workspace, path, display_path(path, workspace), trusted=trusted)
        except NeedsTrust as exc:
            untrusted.append(str(exc))
            continue
        except NoServer:
            continue
        check.files.append(_File(path, server, _bounded(_before, deadline, server, path)))
    yield check  # the write happens here; on an exception we report nothing
    check.lines.extend(f"(no diagnostics: {why})" for why in dict.fromkeys(untrusted))
    skipped: list[str] = []
    for item in check.files:
        shown = display_path(item.path, workspace)
        after = _bounded(_after, deadline, item.server, item.path) if item.before else None
        if item.before is None or after is None:
            if item.path.is_file():
                skipped.append(shown)
            continue
        fresh = new_errors(item.before.items, after.items)
        if not fresh:
            continue
        cap = settings.edit_max_errors
        check.lines.append(f"New errors in {shown} after this edit ({len(fresh)}):")
        check.lines.extend("  " + format_diagnostic(shown, d) for d in fresh[:cap])
        if len(fresh) > cap:
            check.lines.append(f"  ... and {len(fresh) - cap} more")
    if skipped:
        check.lines.append(
            f"(no diagnostics for {', '.join(skipped)}: the language server did not answer within "
            f"{settings.edit_wait_s:g} s)"
        )
