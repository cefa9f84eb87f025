"""Finding 5: approving `pytest -q` "for the session" stored `pytest *`, which also matched
`pytest -q; touch x` and `pytest && cat ~/.ssh/id_rsa`.

Through the real permission engine and dispatcher, with the real Bash tool in-process: once the
user allows `pytest -q` for the session, another pytest runs without a question, but a line that
chains, pipes, substitutes or redirects asks again (and is declined here), and nothing it would
have done happens. The same holds for allow rules and `--allow` patterns.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from openmono.config import ToolRules
from openmono.executor import LocalExecutor
from openmono.llm import ToolCallComplete
from openmono.loop import CallOutcome, DispatchContext, Dispatcher, ToolCatalog, WorkerTools
from openmono.permissions import PermissionEngine, PermissionRequest
from openmono_contracts.toolfacts import ToolFacts
from openmono_worker import WorkerSettings, get_tool

pytestmark = pytest.mark.integration

# `runtests` stands for `pytest` or any program the user approves (whether it is installed does
# not matter: the smuggled part would run either way).
SMUGGLED = [
    "runtests -q; touch x",
    "runtests && touch x",
    "runtests -q || touch x",
    "runtests -q | tee x",
    "runtests -q > x",
    "runtests $(touch x)",
    "runtests `touch x`",
    "runtests -q & touch x",
    "runtests -q\ntouch x",
    "X=1 runtests; touch x",
]


class Session:
    def __init__(self, ws: Path, engine: PermissionEngine, executor: LocalExecutor) -> None:
        self.ws = ws
        self.engine = engine
        self.asked: list[PermissionRequest] = []
        self.answer = "session"
        ctx = DispatchContext(workspace=ws, session_id="s", timeout_s=30)
        catalog = ToolCatalog([WorkerTools(executor)])
        self.dispatcher = Dispatcher(catalog, engine, ctx, approver=self.approve)
        self.n = 0

    async def approve(self, request: PermissionRequest) -> str:
        self.asked.append(request)
        return self.answer

    async def bash(self, command: str) -> CallOutcome:
        self.n += 1
        args = json.dumps({"command": command})
        call = ToolCallComplete(index=0, id=f"c{self.n}", name="Bash", arguments=args)
        out: list[CallOutcome] = []
        await self.dispatcher.run([call], "agent", "t", lambda _e: None, out.append)
        return out[0]


@pytest.fixture
async def session(tmp_path: Path) -> AsyncIterator[Session]:
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()
    executor = LocalExecutor(WorkerSettings(data_dir=tmp_path / "data"))
    try:
        yield Session(ws, PermissionEngine(ws, sandbox_available=True), executor)
    finally:
        await executor.aclose()


async def test_a_session_approval_never_covers_a_chained_or_substituted_command(
    session: Session,
) -> None:
    assert not (await session.bash("runtests -q")).denied
    assert session.asked[-1].session_pattern == "runtests *"
    assert not (await session.bash("runtests -x tests")).denied  # the same program: no question
    assert len(session.asked) == 1
    session.answer = "deny"
    for command in SMUGGLED:
        before = len(session.asked)
        outcome = await session.bash(command)
        assert len(session.asked) == before + 1, f"{command!r} ran on the session's approval"
        assert outcome.denied
    await asyncio.sleep(0.1)
    assert not (session.ws / "x").exists()


async def test_what_is_stored_for_a_command_that_is_not_plain_is_that_command_alone(
    session: Session,
) -> None:
    assert not (await session.bash("runtests -q | tail -3")).denied
    assert session.asked[-1].session_pattern == "runtests -q | tail -3"
    assert not (await session.bash("runtests -q | tail -3")).denied
    assert len(session.asked) == 1
    session.answer = "deny"
    assert (await session.bash("runtests -q | tail -3; touch x")).denied
    assert (await session.bash("bash -c 'touch x'")).denied
    assert not (session.ws / "x").exists()


async def test_a_program_that_runs_what_it_is_given_is_approved_call_by_call(
    session: Session,
) -> None:
    assert not (await session.bash("bash -c 'echo one'")).denied
    assert session.asked[-1].session_pattern == "bash -c 'echo one'"
    session.answer = "deny"
    assert (await session.bash("bash -c 'touch x'")).denied
    assert (await session.bash("xargs touch < /dev/null")).denied
    assert not (session.ws / "x").exists()


async def test_allow_rules_and_flags_match_the_same_way(tmp_path: Path) -> None:
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()
    rules = {"Bash": ToolRules(allow=["runtests *"])}
    for engine in (
        PermissionEngine(ws, rules=rules, sandbox_available=True),
        PermissionEngine(ws, allow=["Bash:runtests *"], sandbox_available=True),
    ):
        assert engine.decide("Bash", {"command": "runtests -q"}, _bash_facts()).action == "allow"
        for command in SMUGGLED:
            decision = engine.decide("Bash", {"command": command}, _bash_facts())
            assert decision.action == "ask", (command, decision)


async def test_deny_rules_catch_a_command_anywhere_in_the_line(tmp_path: Path) -> None:
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()
    engine = PermissionEngine(ws, rules={"Bash": ToolRules(deny=["rm *"])}, yolo=True)
    for command in ("rm -rf build", "ls; rm -rf build", "true && rm x", "ls | rm x"):
        assert engine.decide("Bash", {"command": command}, _bash_facts()).action == "deny"


def _bash_facts() -> ToolFacts:
    tool = get_tool("Bash")
    assert tool is not None
    return tool.facts()
