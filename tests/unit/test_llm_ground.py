"""`llm.tool_ground=named`: the picked call's path is one the request names (issue 42).

The worker answers which words of a request are paths in the workspace (the real `NamedPaths`
tool through a real `LocalExecutor`, on real files, symlinks included); the prompted protocol then
spells those paths out in the picked call's grammar. The inner model is scripted in-process, so
each request's grammar is exact; it is checked with the GBNF recogniser of tests/support.
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from pathlib import Path

import pytest
from openmono.agent._grounding import PathGrounding
from openmono.executor import LocalExecutor
from openmono.llm import ChatMessage, LLMSettings, ModelInfo, PromptedTools, ToolSpec
from openmono.llm import _tools as tools_module
from openmono.llm._ground import grounded
from openmono_contracts.namedpaths import NamedPaths
from openmono_worker import WorkerSettings

from tests.support.gbnf import Grammar
from tests.support.scripted_model import ScriptedModel, reply

READ = ToolSpec(
    name="FileRead",
    description="Read a file.",
    parameters={"type": "object", "properties": {"file_path": {"type": "string"}},
                "required": ["file_path"]},
    paths=("file_path",),
)  # fmt: skip
WRITE = ToolSpec(
    name="FileWrite",
    description="Write a file.",
    parameters={"type": "object", "properties": {"file_path": {"type": "string"},
                "content": {"type": "string"}}, "required": ["file_path", "content"]},
    writes=True,
    paths=("file_path",),
)  # fmt: skip
ASK = "Tell me what the motd file says."


def _call(name: str, args: str) -> str:
    return f'<tool_call>\n{{"name": "{name}", "arguments": {args}}}\n</tool_call>'


class Llama(ScriptedModel):
    async def probe(self) -> ModelInfo:
        return ModelInfo(model="llama", n_ctx=4096, supports_tools=False,
                         tools_known_from="props", takes_grammar=True)  # fmt: skip


async def _picked_grammar(ground: str, grounding: object, request: str = ASK) -> Grammar:
    inner = Llama([reply("read"), reply(_call("FileRead", '{"file_path": "motd"}'))])
    settings = LLMSettings(tool_protocol="prompted", tool_ground=ground)  # type: ignore[arg-type]
    model = PromptedTools(inner, settings)
    model.grounding = grounding  # type: ignore[assignment]
    await model.probe()
    messages = [
        ChatMessage(role="system", content="BASE"),
        ChatMessage(role="user", content=request),
    ]
    async with aclosing(model.stream(messages, [READ, WRITE])) as events:
        _ = [e async for e in events]
    assert len(inner.requests) == 2  # the pick, then the call
    return Grammar(inner.grammars[1] or "")


def _named(existing: list[str], new: list[str] | None = None) -> object:
    asked: list[str] = []

    async def grounding(text: str) -> NamedPaths:
        asked.append(text)
        return NamedPaths(existing=existing, new=new or [])

    grounding.asked = asked  # type: ignore[attr-defined]
    return grounding


async def test_the_picked_read_may_only_name_a_path_the_request_names() -> None:
    grounding = _named(["motd"])
    grammar = await _picked_grammar("named", grounding)
    assert grounding.asked == [ASK]  # type: ignore[attr-defined]
    assert grammar.accepts(_call("FileRead", '{"file_path": "motd"}'))
    # what the bundled model read without it
    assert not grammar.accepts(_call("FileRead", '{"file_path": "motd.csv"}'))
    assert not grammar.accepts(_call("FileRead", '{"file_path": "http://example.com/motd"}'))


async def test_nothing_named_off_or_a_slow_workspace_leave_the_call_free(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    free = _call("FileRead", '{"file_path": "motd.csv"}')
    assert (await _picked_grammar("named", _named([]))).accepts(free)
    off = _named(["motd"])
    assert (await _picked_grammar("off", off)).accepts(free)
    assert off.asked == []  # type: ignore[attr-defined]
    assert (await _picked_grammar("named", None)).accepts(free)

    async def slow(_text: str) -> NamedPaths:
        await asyncio.sleep(5)
        return NamedPaths(existing=["motd"])

    monkeypatch.setattr(tools_module, "GROUND_TIMEOUT_S", 0.05)
    assert (await _picked_grammar("named", slow)).accepts(free)


def test_a_writer_is_held_only_when_the_request_names_a_file_to_create() -> None:
    # "Write a test for foo.py": foo.py exists, nothing to create is named, so the call is free
    assert grounded(WRITE, NamedPaths(existing=["foo.py"])) is None
    held = grounded(WRITE, NamedPaths(existing=["docs"], new=["README.md"]))
    assert held is not None
    assert held.parameters["properties"]["file_path"] == {"enum": ["README.md", "docs"]}
    assert held.parameters["properties"]["content"] == {"type": "string"}
    assert WRITE.parameters["properties"]["file_path"] == {"type": "string"}  # a copy
    assert grounded(READ, NamedPaths(new=["README.md"])) is None  # a read takes what exists


def test_the_workspace_says_which_words_are_paths(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "service").mkdir(parents=True)
    (ws / "service" / "app.yaml").write_text("request_timeout: 45s\n")
    (ws / "motd").write_text("lanterns\n")
    (ws / ".env.example").write_text("DB_NAME=x\n")
    outside = tmp_path / "secret.txt"
    outside.write_text("no\n")
    (ws / "link.txt").symlink_to(outside)  # a symlink out of the workspace is not a path here
    executor = LocalExecutor(WorkerSettings(data_dir=tmp_path / "data"))

    async def ask(text: str) -> NamedPaths | None:
        try:
            return await PathGrounding(executor, ws, "s")(text)
        finally:
            await executor.aclose()

    text = (
        "Read service/app.yaml, the motd file and .env.example: then create notes/todo.md and "
        f"README.md, not version 1.4.0. Also ../secret.txt, {outside}, link.txt and ./motd."
    )
    named = asyncio.run(ask(text))
    assert named is not None
    assert named.existing == ["service/app.yaml", "motd", ".env.example"]
    assert named.new == ["notes/todo.md", "README.md"]


def test_a_workspace_that_cannot_answer_leaves_the_call_free(tmp_path: Path) -> None:
    executor = LocalExecutor(WorkerSettings(data_dir=tmp_path / "data"))

    async def ask() -> NamedPaths | None:
        try:
            return await PathGrounding(executor, tmp_path / "missing", "s")("Read motd")
        finally:
            await executor.aclose()

    assert asyncio.run(ask()) is None
