"""The first hour, as a newcomer has it (issue 27, "Done when"): install `openmono` into a
temporary prefix with the script `make install` runs, then, from a scratch project outside the
checkout, with a shell that knows nothing of the checkout's venv: `openmono --version`,
`openmono -p` against the scripted model (a Bash call and a file write), `openmono doctor`,
`openmono config show`, and every setup command with `--dry-run`. Afterwards the checkout's
`git status` is what it was (empty in CI), the project holds only the file the task made, and
`make uninstall`'s script removes the tool.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from openmono.cli import main

from tests.support.clean_env import clean_environ
from tests.support.dry_run import dry_run_commands, required
from tests.support.procs import ROOT
from tests.support.scripted_llm import Call, ScriptedLLM, Turn

pytestmark = [pytest.mark.integration, pytest.mark.slow]

KEY = "newcomer-key"
PROBE = "command -v python3; python3 -c 'import sys; print(sys.prefix)'"


def _git_status() -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain"],
        capture_output=True, text=True, timeout=30, check=True,
    ).stdout  # fmt: skip


def _newcomer_shell(tmp: Path, bin_dir: Path) -> dict[str, str]:
    """A login shell's environment: no venv of the checkout, the tool's bin dir on PATH."""
    env = clean_environ()
    ours = Path(sys.prefix).resolve()
    for name in ("VIRTUAL_ENV", "VIRTUAL_ENV_PROMPT", "UV_RUN_RECURSION_DEPTH", "PYTHONPATH"):
        env.pop(name, None)
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and not _inside(p, ours)]
    env.update(
        PATH=os.pathsep.join([str(bin_dir), *path]),
        HOME=str(tmp / "home"),
        OPENMONO_DATA_DIR=str(tmp / "data"),
        # what `make up` wrote, on this test's ports (the checkout's own compose/.env is left
        # alone: the tool found the checkout by itself, `config show` says so below)
        OPENMONO_ENV_FILE=str(tmp / "compose.env"),
        OPENMONO_FRPC_CONFIG=str(tmp / "frpc.toml"),
        OPENMONO_LLM_MAX_RETRIES="0",
    )
    for name in ("GATEWAY_PORT", "OPENMONO_ROOT", "WEB_SEARCH_ENABLED", "WEB_SCRAPE_ENABLED"):
        env.pop(name, None)
    return env


def _inside(entry: str, prefix: Path) -> bool:
    path = Path(entry).resolve()
    return path == prefix or prefix in path.parents


@pytest.fixture
def installed(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """`make install`'s script into a temporary prefix; its uninstall afterwards."""
    tools = {"UV_TOOL_DIR": str(tmp_path / "tools"), "UV_TOOL_BIN_DIR": str(tmp_path / "bin")}
    script_env = {**clean_environ(), **tools}
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "install.sh")],
        env=script_env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"openmono 0.1.0 (checkout {ROOT}" in done.stdout
    binary = tmp_path / "bin" / "openmono"
    assert binary.is_file()
    try:
        yield binary, tools
    finally:
        gone = subprocess.run(
            ["bash", str(ROOT / "scripts" / "install.sh"), "uninstall"],
            env=script_env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert gone.returncode == 0 and "removed openmono" in gone.stdout, gone.stdout
        assert not binary.exists()


def test_a_newcomer_installs_and_uses_openmono_on_their_own_project(
    installed: tuple[Path, dict[str, str]],
    scripted_llm: Callable[..., ScriptedLLM],
    tmp_path: Path,
) -> None:
    binary, _tools = installed
    before = _git_status()
    llm = scripted_llm(
        [
            Turn(tool_calls=[Call("Bash", {"command": PROBE}, id="b1")]),
            Turn(tool_calls=[Call("FileWrite", {"file_path": "hello.txt", "content": "hi\n"})]),
            Turn(text="Wrote hello.txt."),
        ],
        api_key=KEY,
        n_ctx=32768,
    )
    port = llm.url.rsplit(":", 1)[1]
    (tmp_path / "compose.env").write_text(f"GATEWAY_PORT={port}\nLLAMA_API_KEY={KEY}\n")
    project = tmp_path / "myproject"
    project.mkdir()
    (project / "app.py").write_text("print('mine')\n")
    env = _newcomer_shell(tmp_path, binary.parent)

    def openmono(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["openmono", *args], env=env, cwd=project,
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip

    version = openmono("--version")
    assert version.returncode == 0 and version.stdout.startswith(f"openmono 0.1.0 (checkout {ROOT}")

    task = openmono("-p", "say hi in hello.txt", "--allow", "Bash", "--allow", "FileWrite")
    assert task.returncode == 0, task.stdout + task.stderr
    assert "Wrote hello.txt." in task.stdout
    assert (project / "hello.txt").read_text() == "hi\n"
    # the Bash tool ran the user's python3, not the tool's venv nor the checkout's
    bash_result = next(
        m["content"]
        for m in llm.chat_requests[1].json["messages"]
        if m.get("role") == "tool" and m.get("tool_call_id") == "b1"
    )
    which, prefix = bash_result.splitlines()[:2]
    for venv in (binary.resolve().parent.parent, ROOT / ".venv", tmp_path / "tools"):
        assert not _inside(which, venv.resolve()), which
        assert not _inside(prefix, venv.resolve()), prefix

    doctor = openmono("doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert f"endpoint http://127.0.0.1:{port} (default from GATEWAY_PORT (env file))" in (
        doctor.stdout
    )
    assert f"✓ workspace: {project}" in doctor.stdout

    shown = openmono("config", "show")
    assert shown.returncode == 0, shown.stderr
    assert f"checkout      {ROOT}" in shown.stdout
    assert KEY not in shown.stdout

    walked = []
    for path, command in dry_run_commands(main):
        done = openmono(*path, "--dry-run", *required(command))
        walked.append(" ".join(path))
        assert done.returncode == 0, f"{path}: {done.stdout}{done.stderr}"
        assert "Traceback" not in done.stderr
    assert {"setup gateway", "setup search", "setup scraper", "tunnel config"} <= set(walked)

    assert _git_status() == before  # empty in CI: nothing of the checkout was touched
    made = sorted(p.relative_to(project).as_posix() for p in project.rglob("*"))
    assert made == ["app.py", "hello.txt"]  # no .venv, uv.lock or .openmono in the project
