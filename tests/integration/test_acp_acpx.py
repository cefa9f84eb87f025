"""A real ACP client, acpx 0.1.15 (npm), drives `openmono acp` against the scripted LLM server.

acpx is installed by `scripts/install-acpx.sh` into `.data/node/`; without it (or without Node)
these tests skip and say why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.clean_env import clean_environ
from tests.support.procs import ROOT
from tests.support.scripted_llm import Call, ScriptedLLM, Turn

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ACPX = ROOT / ".data" / "node" / "node_modules" / ".bin" / "acpx"
KEY = "acpx-key"


def _acpx() -> Path:
    if shutil.which("node") is None:
        pytest.skip("node is not installed (apt-get install nodejs npm), so acpx cannot run")
    if not ACPX.exists():
        pytest.skip(f"acpx is not installed at {ACPX}: run scripts/install-acpx.sh")
    return ACPX


def run_acpx(
    tmp_path: Path, llm: ScriptedLLM, ws: Path, *args: str, timeout_s: float = 120
) -> subprocess.CompletedProcess[str]:
    acpx = _acpx()
    env = clean_environ()
    env.pop("LLAMA_API_KEY", None)
    env.update(
        {
            "HOME": str(tmp_path / "home"),
            "OPENMONO_DATA_DIR": str(tmp_path / "data"),
            "OPENMONO_LLM_ENDPOINT": llm.url,
            "OPENMONO_LLM_API_KEY": KEY,
            "OPENMONO_LLM_CONTEXT_WINDOW": "32768",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        }
    )
    (tmp_path / "home").mkdir(exist_ok=True)
    cmd = [str(acpx), "--agent", "openmono acp", "--cwd", str(ws), "--format", "json", *args]
    return subprocess.run(
        cmd, env=env, cwd=ws, capture_output=True, text=True, timeout=timeout_s,
        start_new_session=True, check=False,
    )  # fmt: skip


def json_lines(text: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


def test_acpx_exec_prompt_permission_and_stop_reason(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    llm = scripted_llm(
        [
            Turn(reasoning="A file is wanted.", text="Writing greeting.txt. ",
                 tool_calls=[Call("FileWrite", {"file_path": "greeting.txt",
                                                "content": "hi from acpx\n"}, id="w1")]),
            Turn(text="Wrote greeting.txt."),
        ],
        api_key=KEY, n_ctx=32768,
    )  # fmt: skip
    proc = run_acpx(tmp_path, llm, ws, "--approve-all", "exec", "write greeting.txt")
    detail = (
        f"exit {proc.returncode}\nstdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}"
    )
    assert proc.returncode == 0, detail
    # the permission was asked (FileWrite needs approval) and answered: the file exists
    assert (ws / "greeting.txt").read_text() == "hi from acpx\n", detail
    frames = json_lines(proc.stdout)
    updates = [f["params"]["update"] for f in frames if f.get("method") == "session/update"]
    said = "".join(
        u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert said == "Writing greeting.txt. Wrote greeting.txt.", detail
    kinds = [u["sessionUpdate"] for u in updates]
    assert "agent_thought_chunk" in kinds, detail
    calls = [u for u in updates if u.get("toolCallId") == "w1"]
    assert [c.get("status") for c in calls] == ["pending", "in_progress", "completed"], detail
    asks = [f for f in frames if f.get("method") == "session/request_permission"]
    assert len(asks) == 1 and asks[0]["params"]["toolCall"]["toolCallId"] == "w1", detail
    # ids are per direction: the answer is the next frame with the request's id after it
    after = frames[frames.index(asks[0]) + 1 :]
    answer = next(f for f in after if f.get("id") == asks[0]["id"] and "result" in f)
    assert answer["result"]["outcome"]["optionId"] == "allow_once", detail
    prompt = next(f for f in frames if f.get("method") == "session/prompt")
    after = frames[frames.index(prompt) + 1 :]
    final = [
        f for f in after if f.get("id") == prompt["id"] and "stopReason" in f.get("result", {})
    ]
    assert final and final[-1]["result"]["stopReason"] == "end_turn", detail
    # both model requests went out; the second carried the tool result
    assert len(llm.chat_requests) == 2
    assert llm.chat_requests[1].json["messages"][-1]["role"] == "tool"


def test_acpx_deny_all_keeps_the_file_unwritten(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    llm = scripted_llm(
        [
            Turn(tool_calls=[Call("FileWrite", {"file_path": "no.txt", "content": "x"}, id="w2")]),
            Turn(text="It was denied."),
        ],
        api_key=KEY, n_ctx=32768,
    )  # fmt: skip
    proc = run_acpx(tmp_path, llm, ws, "--deny-all", "exec", "write no.txt")
    detail = (
        f"exit {proc.returncode}\nstdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}"
    )
    assert not (ws / "no.txt").exists(), detail
    assert len(llm.chat_requests) == 2, detail
    assert "denied" in llm.chat_requests[1].json["messages"][-1]["content"]
