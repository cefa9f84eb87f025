"""Drive `openmono --classic` (the line REPL) in-process: lines through a prompt_toolkit pipe,
output captured from a plain rich console."""

from __future__ import annotations

import io
from pathlib import Path

from openmono.cli._repl import Repl
from openmono.config import RunOptions
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from tests.support.scripted_llm import ScriptedLLM


async def run_classic(llm: ScriptedLLM, ws: Path, lines: list[str], key: str) -> str:
    """Run the REPL on `ws` against `llm`, typing `lines`; everything it printed."""
    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=False, color_system=None)
    with create_pipe_input() as pipe:
        repl = Repl(
            RunOptions(endpoint=llm.url, api_key=key, workspace=ws),
            console,
            input=pipe,
            output=DummyOutput(),
        )
        pipe.send_text("".join(f"{line}\n" for line in lines))
        assert await repl.run() == 0
    return out.getvalue()
