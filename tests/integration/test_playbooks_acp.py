"""A playbook's gate over ACP: the model calls `Playbook`, and both the call and the gate are put
to the editor as `session/request_permission` (the real `openmono acp`, the SDK's client)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from acp import text_block
from openmono.config import record_project_trust

from tests.support.acp_client import RecordingClient, acp_agent
from tests.support.acp_client import agent_env as acp_agent_env
from tests.support.scripted_llm import Call, ScriptedLLM, Turn

pytestmark = pytest.mark.integration

KEY = "acp-key"
GATED = """---
name: gated
steps:
  - {id: deploy, inline-prompt: "Deploy {{parameters.env}} now.", gate: Approve}
parameters:
  env: {type: String, enum: [staging, prod], default: staging}
---
You deploy.
"""


def agent_env(tmp_path: Path, llm: ScriptedLLM) -> dict[str, str]:
    return acp_agent_env(tmp_path, llm.url, KEY)


@pytest.mark.parametrize("answer", ["allow_once", None])
async def test_the_gate_is_a_permission_request(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path, answer: str | None
) -> None:
    ws = tmp_path / "ws"
    (ws / ".openmono" / "playbooks" / "gated").mkdir(parents=True)
    (ws / ".openmono" / "playbooks" / "gated" / "PLAYBOOK.md").write_text(GATED)
    call = Call("Playbook", {"name": "gated", "parameters": {"env": "prod"}}, id="p1")
    turns = [Turn(tool_calls=[call]), Turn(text="deployed"), Turn(text="all done")]
    llm = scripted_llm(turns if answer else [turns[0], turns[2]], api_key=KEY, n_ctx=32768)
    client = RecordingClient(answer)
    env = agent_env(tmp_path, llm)
    record_project_trust(ws, True, [], Path(env["OPENMONO_DATA_DIR"]))  # its playbooks load
    async with acp_agent(env, ws, tmp_path / "acp.log", client=client) as (conn, _):
        await conn.initialize(protocol_version=1)
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        result = await asyncio.wait_for(
            conn.prompt(session_id=sid, prompt=[text_block("deploy to prod")]), 60
        )
    assert result.stop_reason == "end_turn"
    asked = client.permissions
    if answer is None:  # the editor refused the Playbook call itself: nothing ran
        assert [p.tool_call_id for p in asked] == ["p1"]
        assert len(llm.chat_requests) == 2
        return
    assert len(asked) == 2 and asked[0].tool_call_id == "p1"
    gate = asked[1]
    assert gate.tool_call_id.startswith("gate-deploy-")
    assert "Approve gate before step 'deploy' of gated" in gate.title
    assert gate.raw_input["text"].startswith("Deploy prod now.")
    step = llm.chat_requests[1].json
    assert step["messages"][-1]["content"] == "Deploy prod now."
    tool = [m for m in llm.chat_requests[2].json["messages"] if m["role"] == "tool"][-1]
    assert "playbook gated finished (1 steps)" in tool["content"]
