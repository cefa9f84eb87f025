"""Code intelligence through the loop: the scripted model calls the real tools, real basedpyright.

- a FileWrite that introduces an undefined name gets that error back in its result (and not the
  error the file already had);
- CodeIntel find-references and blast-radius on the fixture package give exact file:line sets;
- a language server killed between two Lsp calls is started again for the second one.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from openmono_worker import stop_language_servers
from openmono_worker.codeintel import running_servers

from tests.support.agents import OpenAgent
from tests.support.scripted_llm import Call, ScriptedLLM, Turn

pytestmark = [pytest.mark.integration, pytest.mark.slow]

KEY = "scripted-key"
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "codeintel" / "python"
LOCATION = re.compile(r"^\s*(?:\S+ \(\w+\) )?([\w/.]+\.py):(\d+)", re.M)


@pytest.fixture
def ws(tmp_path: Path, clean_env: Path) -> Iterator[Path]:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURE, root)
    yield root.resolve()
    # Torn down after `open_with` (which needs `ws`), so after every agent here is closed.
    stop_language_servers(root.resolve())


@pytest.fixture
def agent_overrides() -> dict[str, Any]:
    return {"llm.api_key": KEY, "tool_timeout_s": 120}


def tool_results(llm: ScriptedLLM) -> list[str]:
    final = llm.chat_requests[-1].json["messages"]
    return [m["content"] for m in final if m["role"] == "tool"]


async def test_a_write_that_breaks_the_code_gets_the_new_error_back(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    (ws / "notes.py").write_text(
        "def old() -> int:\n    return already_missing\n"
    )  # broken already
    old = "def old() -> int:\n    return already_missing\n"
    broken = old + "\n\ndef new() -> int:\n    return spam + 1\n"
    llm = scripted_llm(
        [
            # read first: FileWrite refuses a blind overwrite (docs/security.md)
            Turn(tool_calls=[Call("FileRead", {"file_path": "notes.py"})]),
            Turn(tool_calls=[Call("FileWrite", {"file_path": "notes.py", "content": broken})]),
            Turn(text="I see the error."),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    agent = await open_with(llm, allow=("FileWrite",))
    done = await agent.run_turn("add new()")
    assert done.reason == "stop"
    [_, result] = tool_results(llm)
    assert result.startswith("Overwrote notes.py")
    assert "New errors in notes.py after this edit (1):" in result
    assert 'notes.py:6:12 error: "spam" is not defined (reportUndefinedVariable)' in result
    assert "already_missing" not in result  # the file had that one before the edit


async def test_find_references_and_blast_radius_on_the_fixture(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    llm = scripted_llm(
        [
            Turn(
                tool_calls=[
                    Call("CodeIntel", {"operation": "find-references", "symbol": "scale"}),
                    Call("CodeIntel", {"operation": "blast-radius", "symbol": "core.scale"}),
                    Call("CodeIntel", {"operation": "find-references", "symbol": "geometry.area"}),
                ]
            ),
            Turn(text="done"),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    agent = await open_with(llm)
    assert (await agent.run_turn("who uses scale?")).reason == "stop"
    refs, radius, reexported = tool_results(llm)

    def locations(text: str) -> set[str]:
        body = text.split("\n", 1)[1]  # the first line is the symbol's own definition
        return {f"{f}:{n}" for f, n in LOCATION.findall(body)}

    assert refs.splitlines()[0] == "geometry.core.scale (function) geometry/core.py:30"
    assert locations(refs) == {
        "geometry/__init__.py:3",
        "geometry/__init__.py:5",  # __all__
        "geometry/report.py:4",
        "geometry/report.py:12",
    }
    # dependents (where each is defined): doubled_square calls scale, summary calls it, and
    # the CLI's module constant and main() call summary; imports alone are not dependents
    dependents = {
        line.split("  (uses")[0].strip() for line in radius.splitlines() if "(uses" in line
    }
    assert dependents == {
        "geometry.report.doubled_square (function) geometry/report.py:11",
        "geometry.report.summary (function) geometry/report.py:15",
        "geometry.cli.DEFAULT (variable) geometry/cli.py:5",
        "geometry.cli.main (function) geometry/cli.py:8",
    }
    assert "depth 3:" in radius and "files: geometry/cli.py, geometry/report.py" in radius
    # a re-export through the package's __init__ resolves to the definition
    assert reexported.startswith("geometry.core.area (function) geometry/core.py:26")
    assert locations(reexported) == {
        "geometry/__init__.py:3",
        "geometry/__init__.py:5",
        "geometry/report.py:8",
    }


async def test_a_killed_language_server_is_restarted(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    hover = {"action": "hover", "file_path": "geometry/core.py", "line": 30, "character": 5}
    killed: list[int] = []

    def kill_then_ask(_request: dict[str, Any]) -> Turn:
        [server] = [s for s in running_servers() if s.workspace == ws]
        assert server.pid is not None
        killed.append(server.pid)
        os.killpg(server.pid, signal.SIGKILL)
        return Turn(tool_calls=[Call("Lsp", hover)])

    llm = scripted_llm(
        [Turn(tool_calls=[Call("Lsp", hover)]), kill_then_ask, Turn(text="ok")],
        api_key=KEY,
        n_ctx=32768,
    )
    agent = await open_with(llm)
    assert (await agent.run_turn("what is scale?")).reason == "stop"
    first, second = tool_results(llm)
    for result in (first, second):
        assert result.startswith("(function) def scale(") and "factor: float = 2" in result
    [server] = [s for s in running_servers() if s.workspace == ws]
    assert server.starts == 2 and server.pid not in killed


async def test_the_session_end_stops_its_language_servers(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, ws: Path
) -> None:
    outline = {"action": "symbols", "file_path": "geometry/cli.py"}
    llm = scripted_llm(
        [Turn(tool_calls=[Call("Lsp", outline)]), Turn(text="ok")], api_key=KEY, n_ctx=32768
    )
    agent = await open_with(llm)
    assert (await agent.run_turn("outline cli.py")).reason == "stop"
    [server] = [s for s in running_servers() if s.workspace == ws]
    pid = server.pid
    assert pid is not None
    await agent.aclose()  # what the CLI, ACP and serve do when a session ends
    assert not [s for s in running_servers() if s.workspace == ws]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
