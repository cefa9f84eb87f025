"""`openmono` interactive on a pseudo-terminal: prompt, a streamed turn, a permission prompt."""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.clean_env import clean_environ
from tests.support.scripted_llm import Call, ScriptedLLM, Turn

pytestmark = pytest.mark.integration

OPENMONO = str(Path(sys.executable).parent / "openmono")
ANSI = re.compile(rb"\x1b\[[0-9;?]*[a-zA-Z]")


class Terminal:
    """A child on a pty; `expect` reads until a text shows up (or fails with what was seen)."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        # openpty + Popen rather than pty.fork: forking a process that runs threads is unsafe.
        self.fd, child = os.openpty()
        self.proc = subprocess.Popen(
            argv, env=env, cwd=cwd, stdin=child, stdout=child, stderr=child,
            start_new_session=True,
        )  # fmt: skip
        os.close(child)
        self.seen = b""

    def expect(self, text: str, timeout: float = 60, after: str = "") -> None:
        """Read until `text` shows up (after the last `after`, when given)."""
        deadline = time.monotonic() + timeout
        while text.encode() not in ANSI.sub(b"", self.seen).rpartition(after.encode() or b"\0")[2]:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{text!r} not seen; got:\n{self.plain()[-3000:]}")
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.5))
            if ready:
                try:
                    self.seen += os.read(self.fd, 65536)
                except OSError as exc:
                    raise AssertionError(f"terminal closed: {self.plain()[-3000:]}") from exc

    def send(self, data: str) -> None:
        os.write(self.fd, data.encode())

    def plain(self) -> str:
        return ANSI.sub(b"", self.seen).decode(errors="replace")

    def wait(self, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            code = self.proc.poll()
            if code is not None:
                return code
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if ready:
                with contextlib.suppress(OSError):
                    self.seen += os.read(self.fd, 65536)
        raise AssertionError(f"openmono did not exit:\n{self.plain()[-3000:]}")

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        os.close(self.fd)


def test_interactive_session_in_a_terminal(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    llm = scripted_llm(
        [
            Turn(reasoning="think", text="Hello **there**, I am streaming.", chunk_delay_s=0.01),
            Turn(tool_calls=[Call("FileWrite", {"file_path": "z.txt", "content": "z\n"})]),
            Turn(text="Wrote z.txt."),
        ],
        api_key="k",
        n_ctx=32768,
    )
    env = clean_environ()
    env.update(
        OPENMONO_DATA_DIR=str(tmp_path / "data"), LLAMA_API_KEY="k", OPENMONO_LLM_ENDPOINT=llm.url,
        TERM="xterm", COLUMNS="100", LINES="40", HOME=str(tmp_path),
    )  # fmt: skip
    term = Terminal([OPENMONO, "--classic"], env, ws)
    try:
        term.expect("agent ›")
        term.send("hello\r")
        term.expect("I am streaming.")
        term.expect("tok/s")
        term.expect("agent ›", after="tok/s")  # type only once a prompt reads the keyboard
        term.send("write z\r")
        term.expect("Allow FileWrite(z.txt)?")
        term.expect("the session >", after="Allow FileWrite(z.txt)?")
        term.send("y\r")
        term.expect("Wrote z.txt.")
        # Ctrl-D only once the next prompt reads the keyboard: typed earlier, the terminal's
        # cooked mode would take it as an end-of-file that nobody reads.
        term.expect("agent ›", after="Wrote z.txt.")
        term.send("\x04")  # Ctrl-D leaves
        assert term.wait() == 0
    finally:
        term.kill()
    assert (ws / "z.txt").read_text() == "z\n"
    assert "thought for" in term.plain()


def test_without_a_terminal_on_stdout_the_line_repl_runs(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path
) -> None:
    """The full-screen UI needs a terminal to draw on: with stdout a pipe, the REPL runs."""
    ws = tmp_path / "ws"
    ws.mkdir()
    llm = scripted_llm([], api_key="k", n_ctx=32768)
    env = clean_environ()
    env.update(
        OPENMONO_DATA_DIR=str(tmp_path / "data"), LLAMA_API_KEY="k", OPENMONO_LLM_ENDPOINT=llm.url,
        TERM="xterm", HOME=str(tmp_path),
    )  # fmt: skip
    fd, child = os.openpty()
    try:
        proc = subprocess.Popen(
            [OPENMONO], env=env, cwd=ws, stdin=child, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        os.write(fd, b"/exit\r")
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate(timeout=10)
            raise AssertionError(f"openmono did not exit: {out!r} {err!r}") from None
    finally:
        os.close(child)
        os.close(fd)
    assert proc.returncode == 0, (out, err)
    assert b"stdout is not a terminal: using the line REPL" in err
    assert b"OpenMono" in out and b"Ctrl-D to leave" in out and b"/exit" in out


def test_the_full_screen_ui_in_a_terminal(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path
) -> None:
    """`openmono` on a terminal draws the full-screen UI; a turn streams; Ctrl-D leaves."""
    ws = tmp_path / "ws"
    ws.mkdir()
    llm = scripted_llm([Turn(text="Hello from the full screen.")], api_key="k", n_ctx=32768)
    env = clean_environ()
    env.update(
        OPENMONO_DATA_DIR=str(tmp_path / "data"), LLAMA_API_KEY="k", OPENMONO_LLM_ENDPOINT=llm.url,
        TERM="xterm-256color", COLUMNS="100", LINES="30", HOME=str(tmp_path),
    )  # fmt: skip
    term = Terminal([OPENMONO], env, ws)
    try:
        term.expect("ready")  # the status bar: the session is open
        term.send("hi\r")
        term.expect("Hello from the full screen.")
        term.send("\x04")  # Ctrl-D leaves
        assert term.wait() == 0
    finally:
        term.kill()
    shown = term.plain()
    assert "scripted-model" in shown and "/models/scripted-model" not in shown
