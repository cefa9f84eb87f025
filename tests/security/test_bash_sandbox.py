"""Finding 1: "safe read-only" Bash commands wrote files, ran code and read the gateway key.

Two halves, both real: the worker's OS sandbox (Landlock + seccomp + no capabilities) that a call
with `ToolRequest.sandbox` runs in, in-process and on a real Celery worker over a real Redis,
and the agent's permission engine, which auto-allows a command only when it runs in that sandbox
(or, where none can run, when a bash parser proves it harmless), with an allow-list of flags.
The attacks are the issue's, through the real engine and the real Bash tool.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from openmono.executor import Executor, LocalExecutor
from openmono.executor.celery import CeleryExecutor
from openmono.llm import ToolCallComplete
from openmono.loop import CallOutcome, DispatchContext, Dispatcher, ToolCatalog, WorkerTools
from openmono.permissions import PermissionEngine
from openmono_contracts import ToolRequest, ToolResult
from openmono_contracts.sandbox import SandboxPolicy
from openmono_worker import WorkerSettings, run_tool
from openmono_worker.sandbox import support

from tests.support.celery_worker import WorkerStack, celery_executor, celery_worker, tool_request
from tests.support.cli import OPENMONO
from tests.support.procs import free_port
from tests.support.redis import redis_server

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not support().available, reason=f"no sandbox: {support().reason}"),
]

NO_LANDLOCK = [sys.executable, str(Path(__file__).parents[1] / "support" / "no_landlock.py")]
SECRET = "LLAMA_API_KEY=sk-the-gateway-key\n"


class Box:
    """A workspace that is a checkout (with `compose/.env`), a data dir, and calls into both."""

    def __init__(self, tmp: Path) -> None:
        self.ws = (tmp / "ws").resolve()
        (self.ws / "compose").mkdir(parents=True)
        (self.ws / "compose" / ".env").write_text(SECRET)
        (self.ws / "notes.txt").write_text("first line\n")
        self.data = (tmp / "data").resolve()
        self.data.mkdir()
        (self.data / "sessions.jsonl").write_text("the operator's sessions\n")
        self.settings = WorkerSettings(data_dir=self.data)
        self.calls = 0

    def request(self, command: str, sandbox: SandboxPolicy | None, **params: object) -> ToolRequest:
        self.calls += 1
        return ToolRequest(
            tool="Bash",
            params={"command": command, **params},
            call_id=f"c{self.calls}",
            session_id="s",
            workspace=str(self.ws),
            sandbox=sandbox,
        )

    def run(self, command: str, sandbox: SandboxPolicy | None = "read_only") -> ToolResult:
        return run_tool(self.request(command, sandbox), settings=self.settings)


@pytest.fixture
def box(tmp_path: Path) -> Box:
    return Box(tmp_path)


# --- the sandbox itself (what the worker enforces) -----------------------------------------------


def test_reads_the_workspace_but_not_its_secrets(box: Box) -> None:
    assert box.run("cat notes.txt").output == "first line\n[exit code 0]"
    r = box.run("cat compose/.env")
    assert not r.ok and "Permission denied" in r.output and "sk-" not in r.output
    # the names in the folder show, the contents never do (also not through a symlink)
    assert box.run("ln -s compose/.env link", None).ok
    r = box.run("cat link; grep -r sk- . ; echo end")
    assert "sk-" not in r.output and "Permission denied" in r.output


def test_home_and_the_data_dir_are_not_visible(box: Box) -> None:
    home = Path.home()
    r = box.run(f"ls {home}; cat {box.data}/sessions.jsonl; ls {box.data}")
    assert "Permission denied" in r.output and "operator" not in r.output
    assert box.run(f"ls {home}", None).ok  # outside the sandbox it is (root's own home)


def test_nothing_outside_the_private_folder_is_writable(box: Box) -> None:
    for attack in ("touch x", "sort -o/tmp/sorted notes.txt", "printf 'x\\n' | uniq - out",
                   "find . -maxdepth 0 -fprint0 out", f"echo x > {box.data}/x",
                   "tree -o out 2>/dev/null || echo x > out"):  # fmt: skip
        r = box.run(attack)
        assert "Permission denied" in r.output or "cannot" in r.output, (attack, r.output)
    assert sorted(p.name for p in box.ws.iterdir()) == ["compose", "notes.txt"]
    r = box.run('echo scratch > "$TMPDIR/x" && cat "$TMPDIR/x"')
    assert r.ok and r.output.startswith("scratch")


def test_the_system_cannot_be_changed(box: Box) -> None:
    before = socket.gethostname()
    r = box.run(f"hostname {before}-x; date -s 2001-01-01; ulimit -Hf unlimited; echo end")
    assert socket.gethostname() == before
    assert "date: cannot set date: Operation not permitted" in r.output
    assert "cannot modify limit" in r.output
    capabilities = box.run("grep CapEff /proc/self/status").output
    assert capabilities.split()[1] == "0000000000000000"


def test_no_network_tcp_udp_or_unix(box: Box) -> None:
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen()
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(box.ws / "sock"))
    unix.listen()
    try:
        tcp_port, udp_port = tcp.getsockname()[1], udp.getsockname()[1]
        connect_unix = (
            f'/usr/bin/python3 -c "import socket; socket.socket(socket.AF_UNIX)'
            f".connect('{box.ws}/sock')\""
        )
        r = box.run(
            f"echo x > /dev/tcp/127.0.0.1/{tcp_port}; echo x > /dev/udp/127.0.0.1/{udp_port}; "
            f"{connect_unix}; echo end"
        )
        assert r.output.count("socket: Permission denied") == 2, r.output
        assert "PermissionError" in r.output
        for listener in (tcp, udp, unix):
            listener.setblocking(False)
            with pytest.raises(BlockingIOError):
                listener.accept() if listener is not udp else listener.recv(10)
    finally:
        tcp.close()
        udp.close()
        unix.close()


def test_environment_is_an_allow_list(box: Box, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    monkeypatch.setenv("BASH_ENV", str(box.ws / "notes.txt"))
    r = box.run("echo token=$GITHUB_TOKEN bash_env=$BASH_ENV; echo home=$HOME")
    assert "token= bash_env=\n" in r.output and "home=/" in r.output
    assert str(Path.home()) + "\n" not in r.output


def test_workspace_write_writes_the_workspace_only(box: Box) -> None:
    (box.ws / "src").mkdir()
    attack = "touch src/made; echo x > /tmp/escape-$$; rm -f compose/.env; cat compose/.env"
    r = box.run(attack, "workspace_write")
    assert (box.ws / "src" / "made").exists()
    assert (box.ws / "compose" / ".env").read_text() == SECRET
    assert "sk-" not in r.output and r.output.count("Permission denied") >= 2, r.output
    assert "sk-" in box.run("cat compose/.env", None).output  # outside the sandbox it shows


def test_a_background_job_runs_in_the_sandbox_too(box: Box) -> None:
    r = run_tool(box.request("cat compose/.env; touch x; echo end", "read_only", background=True),
                 settings=box.settings)  # fmt: skip
    assert r.ok and r.artifact is not None
    log = Path(r.artifact)
    for _ in range(500):
        if log.exists() and "[exit code" in log.read_text():
            break
        asyncio.run(asyncio.sleep(0.02))
    text = log.read_text()
    assert "sk-" not in text and text.count("Permission denied") == 2, text
    assert not (box.ws / "x").exists()


def test_a_sandbox_on_a_tool_that_runs_nothing_is_refused(box: Box) -> None:
    req = box.request("x", "read_only").model_copy(
        update={"tool": "FileRead", "params": {"file_path": "notes.txt"}}
    )
    r = run_tool(req, settings=box.settings)
    assert not r.ok and "cannot run in a sandbox" in (r.error or "")


# --- a worker that cannot sandbox refuses; a real Celery worker enforces it ---------------------


def test_without_landlock_a_sandboxed_call_is_refused_not_run(box: Box) -> None:
    code = (
        "import sys; from openmono_contracts import ToolRequest; "
        "from openmono_worker import run_tool, WorkerSettings; "
        "r = run_tool(ToolRequest.model_validate_json(sys.argv[1]), "
        "settings=WorkerSettings(data_dir=sys.argv[2])); print(r.model_dump_json())"
    )
    req = box.request("touch ran; cat compose/.env", "read_only")
    out = subprocess.run(
        [*NO_LANDLOCK, sys.executable, "-c", code, req.model_dump_json(), str(box.data)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    r = ToolResult.model_validate_json(out)
    assert not r.ok and "cannot make one" in (r.error or "") and "Landlock" in (r.error or "")
    assert not (box.ws / "ran").exists()


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerStack]:
    tmp = tmp_path_factory.mktemp("sandbox")
    with redis_server(tmp) as server, celery_worker(tmp, server.url, data_dir=tmp / "d") as w:
        yield WorkerStack(server, w, tmp / "d")


@pytest.fixture
async def celery_ex(stack: WorkerStack) -> AsyncIterator[CeleryExecutor]:
    async with celery_executor(stack.redis.url) as ex:
        yield ex


async def test_celery_worker_runs_a_sandboxed_call_sandboxed(
    celery_ex: CeleryExecutor, stack: WorkerStack, tmp_path: Path
) -> None:
    box = Box(tmp_path)
    req = tool_request("Bash", {"command": "cat notes.txt compose/.env; touch x"}, box.ws)
    r = await asyncio.wait_for(celery_ex.run(req.model_copy(update={"sandbox": "read_only"})), 60)
    assert r.output.startswith("first line\n") and "sk-" not in r.output
    assert r.output.count("Permission denied") == 2 and not (box.ws / "x").exists()


async def test_celery_worker_without_landlock_refuses(tmp_path: Path) -> None:
    box = Box(tmp_path)
    with (
        redis_server(tmp_path) as server,
        celery_worker(tmp_path, server.url, launcher=NO_LANDLOCK),
    ):
        async with celery_executor(server.url) as ex:
            req = tool_request("Bash", {"command": "touch ran"}, box.ws)
            r = await asyncio.wait_for(ex.run(req.model_copy(update={"sandbox": "read_only"})), 60)
    assert not r.ok and "cannot make one" in (r.error or ""), r
    assert not (box.ws / "ran").exists()
    assert os.path.exists(box.ws / "compose" / ".env")


# --- the agent: the real permission engine and dispatcher, the real Bash tool --------------------


class Agentside:
    """A checkout-like git repository and a dispatcher whose Bash runs on `executor`."""

    def __init__(self, box: Box, executor: Executor) -> None:
        self.box = box
        self.executor = executor
        self.engine = PermissionEngine(
            box.ws, hidden=(box.ws / "compose" / ".env", box.data), sandbox_available=True
        )
        ctx = DispatchContext(workspace=box.ws, session_id="s", timeout_s=30)
        self.dispatcher = Dispatcher(ToolCatalog([WorkerTools(executor)]), self.engine, ctx)
        self.n = 0

    async def bash(self, command: str) -> CallOutcome:
        """One Bash call as the model makes it, in a non-interactive run (an ask is a denial)."""
        self.n += 1
        arguments = json.dumps({"command": command})
        call = ToolCallComplete(index=0, id=f"b{self.n}", name="Bash", arguments=arguments)
        out: list[CallOutcome] = []
        await self.dispatcher.run([call], "agent", "t", lambda _e: None, out.append)
        return out[0]


def _git_repo(ws: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(ws), *args], check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    git("add", "notes.txt")
    git("commit", "-qm", "one")
    # A repository someone else prepared: its fsmonitor runs whenever git reads the index.
    hook = ws / ".git" / "monitor.sh"
    hook.write_text(f"#!/bin/sh\ntouch {ws}/fsmonitor-ran\n")
    hook.chmod(0o755)
    git("config", "core.fsmonitor", str(hook))


@pytest.fixture(params=["in-process", "celery"])
async def agent(
    request: pytest.FixtureRequest, tmp_path: Path, stack: WorkerStack
) -> AsyncIterator[Agentside]:
    box = Box(tmp_path)
    _git_repo(box.ws)
    if request.param == "in-process":
        executor: Executor = LocalExecutor(box.settings)
    else:
        executor = CeleryExecutor(stack.redis.url)
    try:
        yield Agentside(box, executor)
    finally:
        await executor.aclose()


WRITES = {
    "sort -o": "sort -o{ws}/pwned notes.txt",
    "uniq's second operand": "printf 'x\\n' | uniq - {ws}/pwned",
    "find -fprint0": "find . -maxdepth 0 -fprint0 {ws}/pwned",
    "tree -o": "tree -o {ws}/pwned",
    "less -o": "less -o {ws}/pwned notes.txt",
    "git grep -O": "git grep -O'touch {ws}/pwned' -e first",
    "sort --compress-program": "sort --compress-program=sh notes.txt",
}


@pytest.mark.parametrize("attack", sorted(WRITES))
async def test_a_read_only_looking_command_that_writes_or_runs_code_asks(
    agent: Agentside, attack: str
) -> None:
    outcome = await agent.bash(WRITES[attack].format(ws=agent.box.ws))
    assert outcome.denied and "needs approval" in outcome.content, outcome.content
    assert not (agent.box.ws / "pwned").exists()


async def test_setting_the_clock_or_the_hostname_asks(agent: Agentside) -> None:
    # harmless values, in case a regression lets them run: the current second, the same name
    for command in (
        f"date -s @{int(time.time())}",
        f"hostname {socket.gethostname()}",
    ):
        outcome = await agent.bash(command)
        assert outcome.denied and "needs approval" in outcome.content, (command, outcome.content)


async def test_git_status_runs_without_the_repositorys_fsmonitor(agent: Agentside) -> None:
    (agent.box.ws / "notes.txt").write_text("changed\n")
    outcome = await agent.bash("git status --short")
    assert outcome.ok and "M notes.txt" in outcome.content, outcome.content
    assert not (agent.box.ws / "fsmonitor-ran").exists()


async def test_cat_of_the_gateway_key_runs_sandboxed_and_shows_nothing(agent: Agentside) -> None:
    outcome = await agent.bash("cat notes.txt compose/.env")
    assert not outcome.denied  # read-only: it runs without a question, in the sandbox
    assert "first line" in outcome.content and "sk-" not in outcome.content
    assert "Permission denied" in outcome.content


async def test_an_auto_allowed_command_that_runs_the_repos_program_writes_nothing(
    agent: Agentside,
) -> None:
    # `git diff` is auto-allowed, and runs the repository's external diff driver: in the sandbox
    driver = agent.box.ws / ".git" / "differ.sh"
    driver.write_text(f"#!/bin/sh\necho driver-ran; touch {agent.box.ws}/pwned\n")
    driver.chmod(0o755)
    subprocess.run(
        ["git", "-C", str(agent.box.ws), "config", "diff.external", str(driver)], check=True
    )
    (agent.box.ws / "notes.txt").write_text("changed\n")
    outcome = await agent.bash("git diff")
    assert not outcome.denied and "driver-ran" in outcome.content, outcome.content
    assert not (agent.box.ws / "pwned").exists()


async def test_without_a_sandbox_only_what_the_parser_proves_harmless_runs(tmp_path: Path) -> None:
    box = Box(tmp_path)
    _git_repo(box.ws)
    executor = LocalExecutor(box.settings)
    try:
        side = Agentside(box, executor)
        side.engine.sandbox_available = False
        assert (await side.bash("head -1 notes.txt")).content.startswith("first line")
        for command in ("git status", "cat compose/.env", "grep -r sk- .", "cat ../x",
                        "ls *", "jq -n env", f"cat {box.data}/sessions.jsonl"):  # fmt: skip
            outcome = await side.bash(command)
            assert outcome.denied, (command, outcome.content)
        assert not (box.ws / "fsmonitor-ran").exists()
    finally:
        await executor.aclose()


# --- `openmono doctor` says which case applies ---------------------------------------------------


def _doctor(tmp_path: Path, launcher: list[str], **extra: str) -> str:
    ws = tmp_path / "doctor-ws"
    ws.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "OPENMONO_DATA_DIR": str(tmp_path / "doctor-data"),
        "OPENMONO_ENV_FILE": str(tmp_path / "none.env"),
        "OPENMONO_LLM_ENDPOINT": f"http://127.0.0.1:{free_port()}",
        **extra,
    }
    done = subprocess.run(
        [*launcher, OPENMONO, "doctor"],
        env=env,
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.stdout


def test_doctor_names_the_sandbox_or_says_why_there_is_none(tmp_path: Path) -> None:
    assert "✓ sandbox: Landlock ABI" in _doctor(tmp_path, [])
    line = next(x for x in _doctor(tmp_path, NO_LANDLOCK).splitlines() if x[2:10] == "sandbox:")
    assert line.startswith("– sandbox: unavailable (the kernel offers no Landlock"), line
    assert "only commands the shell parser proves harmless" in line


def test_doctor_fails_a_worker_that_cannot_sandbox(tmp_path: Path) -> None:
    with (
        redis_server(tmp_path) as server,
        celery_worker(tmp_path, server.url, launcher=NO_LANDLOCK),
    ):
        out = _doctor(tmp_path, [], OPENMONO_BROKER_URL=server.url)
    assert "✗ sandbox: the worker refuses sandboxed calls" in out, out
