"""The worker's OS sandbox inside its own image, in a default Docker container (issue 36, #1).

The built worker image run as compose runs it (testcontainers' `DockerContainer`: uid 1000, no
extra capabilities, the default seccomp profile), the workspace bind-mounted at /workspace:
Landlock and the seccomp filter work there, a read-only call reads the workspace but not
`compose/.env`, writes nothing and opens no socket; a `workspace_write` call writes the workspace
only; a `setsid` child dies with its call; the rlimits apply. One container, one Python run: a
few seconds once the image is built.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from testcontainers.core.container import DockerContainer

pytestmark = [pytest.mark.containers]

IMAGE = "openmono/worker:local"
PROBE = r"""
import json, os
from pathlib import Path
from openmono_contracts import ToolRequest
from openmono_worker import WorkerSettings, run_tool, sandbox_support

settings = WorkerSettings(data_dir="/tmp/data", limits={"processes": 64})
def run(command, sandbox):
    req = ToolRequest(tool="Bash", params={"command": command}, call_id="c", session_id="s",
                      workspace="/workspace", sandbox=sandbox)
    return run_tool(req, settings=settings).model_dump()
def alive(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
support = sandbox_support()
out = {"support": support.describe(), "available": support.available}
out["ro"] = run("cat notes.txt compose/.env; touch x; echo x > /dev/tcp/127.0.0.1/9; echo end",
                "read_only")
out["ww"] = run("touch src/made && echo made; cat compose/.env; echo end", "workspace_write")
out["escape"] = run("setsid sleep 300 & echo $!", None)
pid = int(out["escape"]["output"].split()[0])
out["escaped_alive"] = alive(pid)
out["limits"] = run("ulimit -Hu; ulimit -Ht", "read_only")
print(json.dumps(out))
"""


def test_the_sandbox_works_in_the_worker_container(built: None, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "compose").mkdir(parents=True)
    (ws / "src").mkdir()
    (ws / "compose" / ".env").write_text("LLAMA_API_KEY=sk-the-gateway-key\n")
    (ws / "notes.txt").write_text("first line\n")
    for folder in (tmp_path, ws, ws / "compose", ws / "src"):
        folder.chmod(0o777)  # the image's uid 1000 owns nothing of the test's folders
    worker = (
        DockerContainer(IMAGE)
        .with_volume_mapping(ws, "/workspace", mode="rw")
        .with_command(["python", "-c", PROBE])
    )
    with worker:  # removed at the end, as `docker run --rm` did
        code = worker.get_wrapped_container().wait(timeout=300)["StatusCode"]
        stdout, stderr = (part.decode(errors="replace") for part in worker.get_logs())
    assert code == 0, stdout + stderr
    out = json.loads(stdout.strip().splitlines()[-1])
    assert out["available"], out["support"]
    ro = out["ro"]["output"]
    assert ro.startswith("first line\n") and "sk-" not in ro, ro
    assert "touch: cannot touch 'x': Permission denied" in ro and "socket: Permission denied" in ro
    assert not (ws / "x").exists()
    ww = out["ww"]["output"]
    assert "made" in ww and "sk-" not in ww and (ws / "src" / "made").exists(), ww
    assert out["escape"]["ok"] and not out["escaped_alive"]
    assert out["limits"]["output"].split()[:2] == ["64", "3601"], out["limits"]
