"""Playbooks in the interactive session: `/playbook`, a playbook's own `/NAME`, gates answered at
the prompt, and auto-trigger (a strong match runs, a weak one is only suggested)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from openmono.config import record_project_trust

from tests.support.classic_repl import run_classic
from tests.support.scripted_llm import ScriptedLLM, Turn

pytestmark = pytest.mark.integration

KEY = "repl-key"
HELLO = """---
name: hello
description: greet the user
trigger: both
trigger-patterns: ["say hello"]
argument-hint: "[who=NAME]"
parameters:
  who: {type: String, default: world}
steps:
  - id: greet
    gate: Confirm
    inline-prompt: "Greet {{parameters.who}}."
---
You greet people.
"""


@pytest.fixture
def ws(tmp_path: Path, clean_env: Path) -> Path:
    root = tmp_path / "ws"
    user = clean_env / "playbooks" / "hello"  # a user playbook may auto-run
    user.mkdir(parents=True)
    (user / "PLAYBOOK.md").write_text(HELLO)
    project = root / ".openmono" / "playbooks" / "bye"  # a project one is only suggested
    project.mkdir(parents=True)
    bye = HELLO.replace("name: hello", "name: bye").replace("say hello", "say bye")
    (project / "PLAYBOOK.md").write_text(bye)
    record_project_trust(root, True, [])  # loaded (a project playbook still only suggested)
    return root


async def test_slash_commands_gates_and_auto_trigger(
    scripted_llm: Callable[..., ScriptedLLM], ws: Path
) -> None:
    llm = scripted_llm(
        [Turn(text="Hello, Ada!"), Turn(text="A normal answer."), Turn(text="Bye.")],
        api_key=KEY,
        n_ctx=32768,
    )
    lines = [
        "/playbook",
        "/hello who=Ada",
        "y",  # the Confirm gate
        "say hello",  # a strong match: runs the playbook...
        "n",  # ...and its gate is denied
        "could you say hello to everyone",  # a weak match: a tip, then an ordinary turn
        "say bye",  # a project playbook: a tip, then an ordinary turn
        "/exit",
    ]
    shown = await run_classic(llm, ws, lines, KEY)
    assert "/hello [who=NAME]" in shown and "/commit" in shown  # the list, shipped ones too
    assert "Confirm gate before step greet" in shown and "Greet Ada." in shown
    assert "Hello, Ada!" in shown and "playbook hello finished (1 steps)" in shown
    assert "running the playbook hello (matched 'say hello')" in shown
    assert "the Confirm gate of step 'greet' was denied" in shown
    assert "tip: the playbook hello may do this" in shown
    assert "A normal answer." in shown
    assert "tip: the playbook bye may do this" in shown and "Bye." in shown
    requests = [r.json for r in llm.chat_requests]
    assert len(requests) == 3
    assert requests[0]["messages"][-1]["content"] == "Greet Ada."
    assert requests[1]["messages"][-1]["content"] == "could you say hello to everyone"
