"""Issue 42's bad input, through the prompted protocol and the real loop: a model that answers
only prose, one that calls the same tool over and over, and a chat template that breaks on the
worked examples each end the turn with a clear `reason`, and none costs a file. The model is
scripted in-process (the model is not the point), wrapped in the real `PromptedTools`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openmono.agent import open_agent
from openmono.config import load_settings
from openmono.llm import HTTPStatusError, ModelInfo, PromptedTools

from tests.support.scripted_model import ScriptedModel, reply

ASK = "What does a.txt say?"


class Llama(ScriptedModel):
    """A llama.cpp server whose template has no tools (the prompted protocol is chosen)."""

    async def probe(self) -> ModelInfo:
        return ModelInfo(model="gemma-3-270m.gguf", n_ctx=8192, supports_tools=False,
                         tools_known_from="props", takes_grammar=True)  # fmt: skip


def _write_call(path: str) -> str:
    call = {"name": "FileWrite", "arguments": {"file_path": path, "content": "x\n"}}
    return f"<tool_call>\n{json.dumps(call)}\n</tool_call>"


async def _turn(tmp_path: Path, script: list[Any], **overrides: Any) -> tuple[Any, dict[str, str]]:
    ws = tmp_path / "ws"
    ws.mkdir(parents=True)
    (ws / "a.txt").write_text("alpha\n")
    settings = load_settings(ws, overrides=overrides)
    model = PromptedTools(Llama(script), settings.llm)
    agent = await open_agent(settings, ws, model=model, yolo=True)
    try:
        done = await agent.run_turn(ASK)
    finally:
        await agent.aclose()
        await agent.executor.aclose()
    files = {str(p.relative_to(ws)): p.read_text() for p in ws.rglob("*") if p.is_file()}
    return done, files


async def test_a_prose_only_model_stops_with_its_answer(tmp_path: Path, clean_env: Path) -> None:
    # the default two_step: step 1's word first ("answer": no tool), then the prose reply
    done, files = await _turn(tmp_path, [reply("answer"), reply("It says 8080, probably.")])
    assert (done.reason, done.text) == ("stop", "It says 8080, probably.")
    assert files == {"a.txt": "alpha\n"}


async def test_the_same_write_over_and_over_in_a_read_task(tmp_path: Path, clean_env: Path) -> None:
    # narrow (the default): FileWrite is not offered to a request that only reads, so the call
    # written as text is not run; the loop guard ends the repetition
    done, files = await _turn(tmp_path, [reply(_write_call("a.txt")) for _ in range(8)])
    assert done.reason == "doom_loop", done
    assert files == {"a.txt": "alpha\n"}
    # the lever off, under --yolo: the floor is off too, and the write reaches FileWrite; the
    # session never read a.txt, so FileWrite refuses the blind overwrite (it used to cost the
    # file) and the loop guard ends the repetition
    done, files = await _turn(
        tmp_path / "off", [reply(_write_call("a.txt")) for _ in range(8)],
        **{"llm.tool_intent": "off"},
    )  # fmt: skip
    assert done.reason == "doom_loop" and files == {"a.txt": "alpha\n"}


async def test_a_template_that_breaks_on_the_examples(tmp_path: Path, clean_env: Path) -> None:
    error = {"code": 500, "message": 'Jinja: unknown role "model"', "type": "server_error"}
    body = json.dumps({"error": error})
    broken = HTTPStatusError("HTTP 500", 500, body)
    done, files = await _turn(tmp_path, [broken, broken, broken, broken, broken])
    assert done.reason == "error" and "500" in (done.error or ""), done
    assert files == {"a.txt": "alpha\n"}
