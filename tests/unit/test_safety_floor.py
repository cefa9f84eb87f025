"""The safety floor (issue 42, item 3): in a turn whose user message only reads, a write that
would run without asking is refused, unless --yolo; a write that would ask still asks."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from openmono.executor import LocalExecutor
from openmono.llm import ToolCallComplete
from openmono.loop import (
    PREPARE_STEPS,
    CallOutcome,
    DispatchContext,
    Dispatcher,
    LoopEvent,
    ToolCatalog,
    ToolFinished,
    WorkerTools,
)
from openmono.permissions import PermissionEngine, PermissionRequest, read_only_task
from openmono_worker import WorkerSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from _eval_tasks import HELDOUT, HELDOUT2, HELDOUT3, TASKS

READ_TASK = "What does a.txt say?"
REFUSED = "the user's request asks to read, list or explain"


def test_no_write_task_of_the_eval_reads_as_read_only() -> None:
    wrongly = [t.id for t in TASKS if t.intent != "read" and read_only_task(t.prompt)]
    assert wrongly == []


def test_no_held_out_write_task_reads_as_read_only() -> None:
    # the floor was not tuned on the held-out set, so only the direction that costs the user a
    # change they asked for is held here; which held-out reads it misses is in docs/agent-eval.md
    wrongly = [
        t.id
        for t in HELDOUT + HELDOUT2 + HELDOUT3
        if t.intent != "read" and read_only_task(t.prompt)
    ]
    assert wrongly == []


def test_every_read_task_of_the_eval_reads_as_read_only() -> None:
    missed = [t.id for t in TASKS if t.intent == "read" and not read_only_task(t.prompt)]
    assert missed == []


@pytest.mark.parametrize(
    ("message", "reads"),
    [
        ("What port does config/server.ini set?", True),
        ("please list the files in src", True),
        ("How is the cache keyed?", True),
        ("Can you set the port to 9000?", False),
        ("Where is formatPrice used? Then rename it to showPrice.", False),
        ("Explain main.py and fix the bug you find", False),
        # contractions open a question too: Gemma 3 270M wrote script.txt when asked "What's
        # inside the scripts folder?" (held-out task h_list_scripts, tool_pick off, --yolo: the
        # lever showed it every writer, as this rule did not read the message as a question)
        ("What's inside the scripts folder?", True),
        ("what\u2019s in src?", True),
        ("Where's the port set?", True),
        ("Doesn't main.py import os?", True),
        ("Can't you show me the config?", True),
        ("What's wrong in main.py? Fix it.", False),
        # and after a preposition: the same model, same run, wrote weather/station.ini when asked
        # "In which file is MAX_RETRIES defined?" (held-out task b_search_const)
        ("In which file is MAX_RETRIES defined?", True),
        ("From where does the config load?", True),
        ("In main.py, show me the config", True),  # the path aside, it opens with "show"
        ("In which file should I rename it?", False),
        # a path names no action: Gemma 3 270M wrote test/fixtures.txt when asked "list the files
        # in tests/fixtures" (held-out set C, defaults, --yolo): the word "tests" had counted as
        # asking for a test, so the request was shown every writer
        ("list the files in tests/fixtures", True),
        ("What does build.sh print?", True),
        ("Show me deploy/main.tf", True),
        ("Show me deploy/main.tf, then deploy it", False),
        ("Read build.log and fix the build", False),
        ("Let's rename it", False),
        ("yes, go ahead", False),
        ("Don't change anything, just look", False),
        ("Why does the build fail?", False),
        ("/commit", False),
        ("", False),
    ],
)
def test_the_rule(message: str, reads: bool) -> None:
    assert read_only_task(message) is reads


def _call(call_id: str, name: str, **args: object) -> ToolCallComplete:
    return ToolCallComplete(index=0, id=call_id, name=name, arguments=json.dumps(args))


WRITE = _call("w", "FileWrite", file_path="a.txt", content="changed\n")
TOUCH = _call("t", "Bash", command="touch b.txt")
CAT = _call("c", "Bash", command="cat a.txt")
READ = _call("r", "FileRead", file_path="a.txt")  # a.txt exists: FileWrite wants it read first


def _run(
    tmp_path: Path,
    engine: PermissionEngine,
    calls: list[ToolCallComplete],
    task: str | None,
    asked: list[PermissionRequest] | None = None,
) -> tuple[list[CallOutcome], list[ToolFinished]]:
    executor = LocalExecutor(WorkerSettings(data_dir=tmp_path / "data"))
    ctx = DispatchContext(workspace=engine.workspace, session_id="s", timeout_s=30)

    async def approver(request: PermissionRequest) -> str:
        assert asked is not None
        asked.append(request)
        return "deny"

    dispatcher = Dispatcher(
        ToolCatalog([WorkerTools(executor)]),
        engine,
        ctx,
        approver=approver if asked is not None else None,  # type: ignore[arg-type]
    )
    out: list[CallOutcome] = []
    events: list[LoopEvent] = []

    async def run() -> None:
        try:
            await dispatcher.run(calls, "agent", "t", events.append, out.append, task=task)
        finally:
            await executor.aclose()

    asyncio.run(run())
    return out, [e for e in events if isinstance(e, ToolFinished)]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    return root


def test_it_is_a_named_step_before_the_permissions() -> None:
    names = [s.name for s in PREPARE_STEPS]
    assert names.index("mode") < names.index("read_only_task") < names.index("permissions")


def test_auto_edit_refuses_a_write_in_a_read_task(tmp_path: Path, ws: Path) -> None:
    engine = PermissionEngine(ws, allow=("FileWrite", "Bash"))
    out, finished = _run(tmp_path, engine, [WRITE, TOUCH, CAT], READ_TASK)
    write, touch, cat = out
    assert not write.ok and write.denied and REFUSED in write.content
    assert "no file was changed" in write.content and "ask the user" in write.content
    assert not touch.ok and REFUSED in touch.content
    assert cat.ok and "alpha" in cat.content  # a read-only command still runs
    assert (ws / "a.txt").read_text() == "alpha\n" and not (ws / "b.txt").exists()
    assert [(f.writes, f.refused_by) for f in finished] == [
        (True, "read_only_task"),
        (True, "read_only_task"),
        (False, None),
    ]


@pytest.mark.parametrize(
    "task",
    [
        "What's inside the scripts folder?",
        "In which file is MAX_RETRIES defined?",
        "list the files in tests/fixtures",
    ],
)
def test_a_contracted_or_prefixed_question_is_held_to_reading_too(
    tmp_path: Path, ws: Path, task: str
) -> None:
    # the held-out tasks where Gemma 3 270M wrote a file: before, neither of the first two opened
    # a question, and the third's path named a test
    engine = PermissionEngine(ws, allow=("FileWrite",))
    (write,), _ = _run(tmp_path, engine, [WRITE], task)
    assert not write.ok and REFUSED in write.content
    assert (ws / "a.txt").read_text() == "alpha\n"


def test_auto_edit_writes_when_the_task_asks_for_it(tmp_path: Path, ws: Path) -> None:
    engine = PermissionEngine(ws, allow=("FileWrite",))
    (_, write), _ = _run(tmp_path, engine, [READ, WRITE], "Replace the text of a.txt with: changed")
    assert write.ok and (ws / "a.txt").read_text() == "changed\n"


def test_yolo_writes_even_in_a_read_task(tmp_path: Path, ws: Path) -> None:
    (_, write), _ = _run(tmp_path, PermissionEngine(ws, yolo=True), [READ, WRITE], READ_TASK)
    assert write.ok and (ws / "a.txt").read_text() == "changed\n"


def test_a_write_that_asks_still_asks(tmp_path: Path, ws: Path) -> None:
    asked: list[PermissionRequest] = []
    (write,), finished = _run(tmp_path, PermissionEngine(ws), [WRITE], READ_TASK, asked)
    assert [r.tool for r in asked] == ["FileWrite"]  # the user decides, as without the floor
    assert not write.ok and "the user declined" in write.content
    assert finished[0].refused_by == "permissions"
    # and non-interactive, the same denial as before
    (write,), _ = _run(tmp_path, PermissionEngine(ws), [WRITE], READ_TASK)
    assert "non-interactive" in write.content and REFUSED not in write.content
    assert (ws / "a.txt").read_text() == "alpha\n"
