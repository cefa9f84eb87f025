"""Executor-agnostic tool cases: the same requests and checks run through any `Executor`.

Each `ToolCase` prepares a workspace, names one request and checks the result (and the workspace).
`run_case(executor, case, workspace)` does the three steps. The local executor runs them in
`tests/integration/test_tools_executor.py`; the Celery executor's tests run the same list, so both
executors are held to the same behaviour. `check_cancel` and `check_parallel_reads` cover what a
single request cannot: cancellation kills the process group, read-only calls may run side by side.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openmono_contracts import ToolRequest, ToolResult


def _nothing(ws: Path) -> None:
    return None


@dataclass(frozen=True)
class ToolCase:
    name: str
    tool: str
    params: dict[str, Any]
    check: Callable[[ToolResult, Path], None]
    setup: Callable[[Path], None] = _nothing
    timeout_s: float = 30.0
    extra: dict[str, Any] = field(default_factory=dict)


def request_for(case: ToolCase, workspace: Path, call_id: str | None = None) -> ToolRequest:
    return ToolRequest(
        tool=case.tool,
        params=case.params,
        call_id=call_id or f"suite-{case.name}",
        session_id="tool-suite",
        workspace=str(workspace),
        timeout_s=case.timeout_s,
    )


async def run_case(executor: Any, case: ToolCase, workspace: Path) -> ToolResult:
    """Set up, run through `executor.run`, check; returns the result for further asserts."""
    workspace.mkdir(parents=True, exist_ok=True)
    case.setup(workspace)
    result = await executor.run(request_for(case, workspace))
    assert result.call_id == f"suite-{case.name}"
    case.check(result, workspace)
    return result


def pid_alive(pid: int) -> bool:
    """True while `pid` runs (a zombie counts as dead: it runs nothing)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# --- setups and checks --------------------------------------------------------------------------


_EPOCH = 1_750_000_000


def _files(**files: str | bytes) -> Callable[[Path], None]:
    def setup(ws: Path) -> None:
        for i, (name, content) in enumerate(files.items()):
            path = ws / name.replace("__", "/")
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)
            # Fixed, distinct mtimes: Glob lists newest first, and files written within one
            # timestamp tick would otherwise tie in one run and not in the other.
            stamp = _EPOCH + 60 * i
            os.utime(path, (stamp, stamp))

    return setup


def _ok(*needles: str) -> Callable[[ToolResult, Path], None]:
    def check(r: ToolResult, ws: Path) -> None:
        assert r.ok, r.error
        for needle in needles:
            assert needle in r.output, (needle, r.output)

    return check


def _fails(*needles: str) -> Callable[[ToolResult, Path], None]:
    def check(r: ToolResult, ws: Path) -> None:
        assert not r.ok, r.output
        for needle in needles:
            assert needle in (r.error or ""), (needle, r.error)

    return check


def _both(*checks: Callable[[ToolResult, Path], None]) -> Callable[[ToolResult, Path], None]:
    def check(r: ToolResult, ws: Path) -> None:
        for c in checks:
            c(r, ws)

    return check


def _content(name: str, expected: str | None) -> Callable[[ToolResult, Path], None]:
    def check(r: ToolResult, ws: Path) -> None:
        path = ws / name
        if expected is None:
            assert not path.exists(), f"{name} should not exist"
        else:
            assert path.read_text() == expected, path.read_text()

    return check


def _outside_link(ws: Path) -> None:
    outside = ws.parent / f"{ws.name}-outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.txt").write_text("secret\n")
    (ws / "innocent.txt").symlink_to(outside / "secret.txt")


def _fast_timeout(r: ToolResult, ws: Path) -> None:
    assert not r.ok and "timed out" in (r.error or ""), r
    # timeout 1 s; the call must come back within timeout + 2 s although `cat` holds the pipe
    assert r.elapsed_ms < 3000, r.elapsed_ms
    pid = int((ws / "grandchild.pid").read_text())
    deadline = time.monotonic() + 5
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not pid_alive(pid), "the grandchild survived the timeout"


def _artifact(r: ToolResult, ws: Path) -> None:
    assert r.ok and r.truncated and r.artifact, r
    full = Path(r.artifact).read_text()
    assert full.count("line ") == 5000 and "[exit code 0]" in full
    assert len(r.output.encode()) < 10 * 1024
    assert r.output.startswith("line 1\n") and r.artifact in r.output
    assert "[exit code 0]" in r.output  # the tail is shown too


PATCH = """--- a/code.py
+++ b/code.py
@@ -1,3 +1,3 @@
 def f():
-    return 1
+    return 2
 # end
--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1 @@
+print("new")
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
"""

_GO_PROJECT = {
    "go.mod": "module example.com/m\n",
    "lib/lib.go": "package lib\n\nfunc Helper() int { return 1 }\n",
    "main.go": 'package main\n\nimport "example.com/m/lib"\n\nfunc main() { lib.Helper() }\n',
}

CASES: list[ToolCase] = [
    ToolCase(  # the repository map the agent asks for (never offered to the model)
        "repo_map",
        "RepoMap",
        {"budget_tokens": 200, "files": ["main.go", "../outside.go"], "text": "Helper"},
        _ok("lib/lib.go:\n    3│func Helper() int { return 1 }"),
        _files(**_GO_PROJECT),
    ),
    ToolCase(  # which words of a request are paths (asked by the agent, never offered)
        "named_paths",
        "NamedPaths",
        {"text": "Read a.txt and ../outside.txt, then create notes/new.md."},
        _ok('{"existing":["a.txt"],"new":["notes/new.md"]}'),
        _files(**{"a.txt": "alpha\n"}),
    ),
    ToolCase(
        "read_numbered",
        "FileRead",
        {"file_path": "a.txt"},
        _ok("     1\talpha\n     2\tbeta\n     3\tgamma"),
        _files(**{"a.txt": "alpha\nbeta\ngamma\n"}),
    ),
    ToolCase(
        "read_offset_limit",
        "FileRead",
        {"file_path": "a.txt", "offset": 2, "limit": 1},
        _ok("     2\tbeta", "continue with offset=3"),
        _files(**{"a.txt": "alpha\nbeta\ngamma\n"}),
    ),
    ToolCase(
        "read_binary_refused",
        "FileRead",
        {"file_path": "img.bin"},
        _fails("binary file"),
        _files(**{"img.bin": b"\x89PNG\x00\x01\x02"}),
    ),
    ToolCase("read_escape_refused", "FileRead", {"file_path": "../x"}, _fails("outside")),
    ToolCase(
        "read_symlink_escape_refused",
        "FileRead",
        {"file_path": "innocent.txt"},
        _fails("outside the workspace"),
        _outside_link,
    ),
    ToolCase(
        "write_creates_dirs",
        "FileWrite",
        {"file_path": "deep/er/new.txt", "content": "héllo\n"},
        _both(_ok("Created deep/er/new.txt"), _content("deep/er/new.txt", "héllo\n")),
    ),
    ToolCase(
        "edit_unique",
        "FileEdit",
        {"file_path": "e.py", "old_string": "x = 1", "new_string": "x = 42"},
        _both(_ok("1 replacement"), _content("e.py", "x = 42\ny = 2\n")),
        _files(**{"e.py": "x = 1\ny = 2\n"}),
    ),
    ToolCase(
        "edit_not_unique_refused",
        "FileEdit",
        {"file_path": "e.py", "old_string": "same", "new_string": "other"},
        _both(_fails("occurs 2 times"), _content("e.py", "same\nsame\n")),
        _files(**{"e.py": "same\nsame\n"}),
    ),
    ToolCase(
        "multi_edit_all_or_nothing",
        "FileEdit",
        {
            "file_path": "e.py",
            "edits": [
                {"old_string": "a", "new_string": "b"},
                {"old_string": "missing", "new_string": "c"},
            ],
        },
        _both(_fails("edit 2 of 2", "no edit was applied"), _content("e.py", "a\n")),
        _files(**{"e.py": "a\n"}),
    ),
    ToolCase(
        "patch_multi_file",
        "ApplyPatch",
        {"patch": PATCH},
        _both(
            _ok("modified code.py", "created pkg/new.py", "deleted old.txt"),
            _content("code.py", "def f():\n    return 2\n# end\n"),
            _content("pkg/new.py", 'print("new")\n'),
            _content("old.txt", None),
        ),
        _files(**{"code.py": "def f():\n    return 1\n# end\n", "old.txt": "bye\n"}),
    ),
    ToolCase(
        "patch_dry_run",
        "ApplyPatch",
        {"patch": PATCH, "dry_run": True},
        _both(_ok("Dry run"), _content("old.txt", "bye\n"), _content("pkg/new.py", None)),
        _files(**{"code.py": "def f():\n    return 1\n# end\n", "old.txt": "bye\n"}),
    ),
    ToolCase(
        "glob_recursive",
        "Glob",
        {"pattern": "**/*.py"},
        _both(_ok("src/m.py", "src/sub/n.py"), lambda r, ws: _no("notes.md", r)),
        _files(**{"src__m.py": "", "src__sub__n.py": "", "notes.md": ""}),
    ),
    ToolCase(
        "grep_format",
        "Grep",
        {"pattern": "needle", "glob": "*.py"},
        _ok("src/m.py:2:a needle here", "[1 matching line in 1 file]"),
        _files(**{"src__m.py": "hay\na needle here\n", "src__n.txt": "needle\n"}),
    ),
    ToolCase(
        "list_directory",
        "ListDirectory",
        {"recursive": True},
        _ok("src/\nsrc/m.py\nsrc/sub/\nsrc/sub/n.py"),
        _files(**{"src__m.py": "", "src__sub__n.py": ""}),
    ),
    ToolCase(
        "bash_exit_code",
        "Bash",
        {"command": "echo out; echo err >&2; exit 3"},
        _both(_fails("exit code 3"), lambda r, ws: _has(r, "out\nerr\n[exit code 3]")),
    ),
    ToolCase(
        "bash_grandchild_timeout",
        "Bash",
        {"command": "(sleep 100 | cat) & echo $! > grandchild.pid; wait", "timeout_ms": 1000},
        _fast_timeout,
    ),
    ToolCase(
        "bash_big_output_artifact",
        "Bash",
        {"command": "for i in $(seq 1 5000); do echo line $i; done"},
        _artifact,
    ),
    # code intelligence runs where the workspace is: the language server starts in that process
    ToolCase(
        "edit_reports_new_error",
        "FileEdit",
        {"file_path": "m.py", "old_string": "return 1", "new_string": "return nope"},
        _ok('m.py:2:12 error: "nope" is not defined'),
        setup=_files(**{"m.py": "def f() -> int:\n    return 1\n"}),
        timeout_s=60.0,
    ),
    ToolCase(
        "lsp_symbols",
        "Lsp",
        {"action": "symbols", "file_path": "m.py"},
        _ok("m.py: 1 symbols\nfunction f"),
        setup=_files(**{"m.py": "def f() -> int:\n    return 1\n"}),
        timeout_s=60.0,
    ),
    ToolCase(
        "lsp_symlink_escape_refused",
        "Lsp",
        {"action": "symbols", "file_path": "innocent.txt"},
        _fails("outside the workspace"),
        setup=_outside_link,
    ),
    ToolCase(
        "code_intel_references",
        "CodeIntel",
        {"operation": "find-references", "symbol": "lib.twice"},
        _ok(
            "lib.twice (function) lib.py:1",
            "2 references in 1 files",
            "use.py:1:17 import",  # the imported name itself
            "use.py:3:7 call",
        ),
        setup=_files(
            **{
                "lib.py": "def twice(x):\n    return 2 * x\n",
                "use.py": "from lib import twice\n\nprint(twice(2))\n",
            }
        ),
    ),
    ToolCase("unknown_tool", "NoSuchTool", {}, _fails("unknown tool 'NoSuchTool'")),
    ToolCase(
        "invalid_params",
        "FileRead",
        {"path": "a.txt"},
        _fails("invalid parameters for FileRead", "file_path: Field required"),
    ),
]


def _no(needle: str, r: ToolResult) -> None:
    assert needle not in r.output, r.output


def _has(r: ToolResult, needle: str) -> None:
    assert needle in r.output, r.output


async def check_cancel(executor: Any, workspace: Path, call_id: str = "suite-cancel") -> float:
    """Cancel a running Bash call; its whole process group dies. Returns the seconds it took."""
    workspace.mkdir(parents=True, exist_ok=True)
    req = ToolRequest(
        tool="Bash",
        params={"command": "sleep 60 & echo $! > child.pid; wait"},
        call_id=call_id,
        session_id="tool-suite",
        workspace=str(workspace),
        timeout_s=120,
    )
    task = asyncio.ensure_future(executor.run(req))
    pid_file = workspace / "child.pid"
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline, "the command never started"
        assert not task.done(), task.result()
        await asyncio.sleep(0.02)
    pid = int(pid_file.read_text())
    assert pid_alive(pid)
    start = time.monotonic()
    await executor.cancel(call_id)
    result: ToolResult = await asyncio.wait_for(task, 30)
    took = time.monotonic() - start
    assert not result.ok and result.error == "cancelled", result
    deadline = time.monotonic() + 5
    while pid_alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert not pid_alive(pid), "the command's child survived the cancellation"
    return took


async def check_parallel_reads(executor: Any, workspace: Path, n: int = 8) -> None:
    """Concurrent read-only calls all answer, each with its own call id and content."""
    workspace.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (workspace / f"f{i}.txt").write_text(f"content {i}\n")
    reqs = [
        ToolRequest(
            tool="FileRead",
            params={"file_path": f"f{i}.txt"},
            call_id=f"par-{i}",
            session_id="tool-suite",
            workspace=str(workspace),
        )
        for i in range(n)
    ]
    results = await asyncio.gather(*(executor.run(r) for r in reqs))
    for i, r in enumerate(results):
        assert r.ok and r.call_id == f"par-{i}" and f"content {i}" in r.output, r
