"""FileWrite overwrites only what the session has seen (ToolRequest.known_files): the loop remembers
the files its successful reads and writes named, and a blind overwrite of an existing file is
refused with what to do instead. Real dispatcher, real in-process worker, a temporary workspace."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from openmono.executor import LocalExecutor
from openmono.llm import ToolCallComplete
from openmono.loop import CallOutcome, DispatchContext, Dispatcher, ToolCatalog, WorkerTools
from openmono.loop._dispatch import KNOWN_MAX
from openmono.permissions import PermissionEngine
from openmono_worker import WorkerSettings

REFUSED = "this session has not read it"


def _call(call_id: str, name: str, **args: object) -> ToolCallComplete:
    return ToolCallComplete(index=0, id=call_id, name=name, arguments=json.dumps(args))


def _session(tmp_path: Path, *turns: list[ToolCallComplete]) -> list[list[CallOutcome]]:
    """Each list of calls as one model reply, in one session (one dispatcher), under --yolo."""
    ws = tmp_path / "ws"
    executor = LocalExecutor(WorkerSettings(data_dir=tmp_path / "data"))
    ctx = DispatchContext(workspace=ws, session_id="s", timeout_s=30)
    engine = PermissionEngine(ws, yolo=True)
    dispatcher = Dispatcher(ToolCatalog([WorkerTools(executor)]), engine, ctx)
    outs: list[list[CallOutcome]] = []

    async def run() -> None:
        try:
            for calls in turns:
                out: list[CallOutcome] = []
                await dispatcher.run(calls, "agent", "t", lambda _e: None, out.append)
                outs.append(out)
        finally:
            await executor.aclose()

    asyncio.run(run())
    return outs


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "greet.py").write_text('print("Hello, Bob")\n')
    return ws


def test_a_blind_overwrite_is_refused_and_a_read_first_lets_it_through(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    write = _call("w1", "FileWrite", file_path="greet.py", content="Bob Alice")
    ((blind,), (read,), (again,)) = _session(
        tmp_path, [write], [_call("r", "FileRead", file_path="greet.py")], [write]
    )
    assert not blind.ok and REFUSED in blind.content and "FileEdit" in blind.content
    assert read.ok and again.ok and (ws / "greet.py").read_text() == "Bob Alice"


def test_what_the_session_wrote_or_edited_it_may_write_again(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    ((made,), (edited,), (over_made,), (over_edited,)) = _session(
        tmp_path,
        [_call("c", "FileWrite", file_path="new.txt", content="one\n")],
        [_call("e", "FileEdit", file_path="greet.py", old_string="Bob", new_string="Alice")],
        [_call("w1", "FileWrite", file_path="new.txt", content="two\n")],
        [_call("w2", "FileWrite", file_path="./greet.py", content="print(1)\n")],
    )
    assert made.ok and edited.ok and over_made.ok and over_edited.ok
    assert (ws / "new.txt").read_text() == "two\n" and (ws / "greet.py").read_text() == "print(1)\n"


def test_a_failed_read_or_a_listing_does_not_count(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    write = _call("w", "FileWrite", file_path="greet.py", content="x")
    ((bad_read,), (listing,), (blind,)) = _session(
        tmp_path,
        [_call("r", "FileRead", file_path="greet.py", offset=50)],  # past the end: failed
        [_call("l", "ListDirectory", path=".")],
        [write],
    )
    assert not bad_read.ok and listing.ok and not blind.ok and REFUSED in blind.content
    assert (ws / "greet.py").read_text() == 'print("Hello, Bob")\n'


def test_the_memory_is_bounded_oldest_first(tmp_path: Path) -> None:
    ctx = DispatchContext(workspace=tmp_path, session_id="s", timeout_s=30)
    ctx.note_known([f"f{i}" for i in range(KNOWN_MAX + 5)])
    ctx.note_known(["f10"])  # seen again: the most recent
    names = list(ctx.known)
    assert len(names) == KNOWN_MAX and names[0] == "f5" and names[-1] == "f10"
    write = ctx.request("w", "FileWrite", {}, writes=True)
    read = ctx.request("r", "FileRead", {})
    assert write.known_files == names and read.known_files is None
