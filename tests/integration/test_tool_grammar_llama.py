"""The tool protocols against the real llama.cpp server (xllamacpp) and the bundled SmolLM2.

The server runs with our chat template (what `make up` serves), so `/props` says the template
renders tools; the GGUF's own template does not, and a template file that is missing is a clear
error. The prompted block of the core tools is measured with the server's own tokenizer, and
every call the model writes under the grammar must parse: an offered name and arguments that
the tool's own `Params` model accepts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import aclosing
from pathlib import Path
from typing import Any

import httpx
import pytest
from openmono.agent import build_system_prompt
from openmono.config import LLMSettings
from openmono.executor import LocalExecutor
from openmono.llm import ChatMessage, OpenAICompatModel, PromptedTools, ToolCallComplete
from openmono.llm._prompted import prompted_messages
from openmono.loop import ToolCatalog, WorkerTools
from openmono_worker import get_tool

from tests.support.llama import LlamaServer, llama_server
from tests.support.procs import Proc, free_port, running

# generation on 2 shared cores: ~10-60 s per request under load
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(900)]

# Requests the bundled model answers with a call often enough (measured: bench/agent_eval.py).
PROMPTS = [
    "Create hello.txt containing exactly: hello world",
    "List the files in the assets directory.",
    "Run the command: touch done.flag",
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    with llama_server(tmp_path_factory.mktemp("llama-tools"), ctx=4096, parallel=1) as server:
        yield server


def _auth(server: LlamaServer) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.api_key}"}


def _core() -> list[Any]:
    catalog = ToolCatalog([WorkerTools(LocalExecutor())])
    return [s for n, s in catalog.specs.items() if catalog.facts_of(n).core]


def _tokens(server: LlamaServer, messages: list[ChatMessage]) -> int:
    body = {"messages": [m.to_wire() for m in messages]}
    prompt = httpx.post(
        f"{server.url}/apply-template", json=body, headers=_auth(server), timeout=60
    )
    content = {"content": prompt.json()["prompt"]}
    tok = httpx.post(f"{server.url}/tokenize", json=content, headers=_auth(server), timeout=60)
    return len(tok.json()["tokens"])


def test_our_template_renders_tools_for_the_bundled_model(served: LlamaServer) -> None:
    caps = httpx.get(f"{served.url}/props", headers=_auth(served), timeout=30).json()
    assert caps["chat_template_caps"]["supports_tools"] is True
    assert caps["chat_template_caps"]["supports_tool_calls"] is True


def test_the_core_tools_block_costs_under_1000_tokens(served: LlamaServer, tmp_path: Path) -> None:
    system = build_system_prompt(tmp_path, "agent", [])
    base = [ChatMessage(role="system", content=system), ChatMessage(role="user", content="hi")]
    extra = _tokens(served, prompted_messages(base, _core())) - _tokens(served, base)
    print(f"prompted core tools block: +{extra} tokens (SmolLM2 tokenizer)")
    assert 200 < extra < 1000


async def test_every_call_under_the_grammar_parses(served: LlamaServer, tmp_path: Path) -> None:
    tools = _core()
    settings = LLMSettings(
        endpoint=served.url, api_key=served.api_key, tool_protocol="prompted", max_retries=0
    )
    calls: list[ToolCallComplete] = []
    async with OpenAICompatModel(settings) as client:
        model = PromptedTools(client, settings)
        info = await model.probe()
        assert info.takes_grammar and info.tool_protocol == "prompted"
        system = build_system_prompt(tmp_path, "agent", [])
        for prompt in PROMPTS:
            messages = [
                ChatMessage(role="system", content=system),
                ChatMessage(role="user", content=prompt),
            ]
            stream = model.stream(messages, tools, max_tokens=64, temperature=0.0)
            async with aclosing(stream) as events:
                calls += [e async for e in events if isinstance(e, ToolCallComplete)]
    assert calls, "the model wrote no call at all: nothing was tested"
    offered = {t.name for t in tools}
    for call in calls:
        assert call.error is None, call
        assert call.name in offered
        get_tool(call.name).parse(json.loads(call.arguments))  # the tool's own validation
    print(f"{len(calls)} calls under the grammar, all valid: {[c.name for c in calls]}")


def test_a_missing_template_file_is_a_clear_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "openmono.stack.llama_server", "--port", "1", "--api-key", "k",
         "--chat-template-file", str(tmp_path / "nope.jinja")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "nope.jinja" in done.stderr and "smollm2-tools.jinja" in done.stderr


def test_none_keeps_the_ggufs_own_template(tmp_path: Path) -> None:
    port = free_port()
    cmd = [sys.executable, "-m", "openmono.stack.llama_server", "--port", str(port),
           "--api-key", "k", "--ctx-size", "512", "--parallel", "1",
           "--chat-template-file", "none"]  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    with running(cmd, tmp_path / "llama.log", ready_url=f"{url}/health", timeout_s=120) as p:
        assert isinstance(p, Proc)
        props = httpx.get(f"{url}/props", headers={"Authorization": "Bearer k"}, timeout=30)
        assert props.json()["chat_template_caps"]["supports_tools"] is False
