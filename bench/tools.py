"""Tool execution overhead and Bash timeout latency, against baselines measured in the same run.

1. `run_tool(Bash "true")` vs `subprocess.run(["bash", "-c", "true"])`: what the process-group,
   selector loop and result building cost per command.
2. `run_tool(FileRead)` vs reading and numbering the file directly: the validation/guard overhead.
3. Bash timeout latency: a 0.5 s timeout on `sleep 100 | cat & sleep 100` (a grandchild holding the
   pipe); the overshoot past the timeout is what the issue bounds (≤ 2 s).
4. The sandbox: auto-allowed commands through `run_tool` with `sandbox="read_only"` against the same
   commands without it; target (issue 36): at most +20 ms median, natively and in the worker
   container (`--container IMAGE` runs this part in the worker image, default Docker).
5. How a confinement is entered, for one `bash -c true`: vfork (the baseline), `preexec_fn` in this
   process (small, and with 200 MB of heap like the agent's), a `python -I -S` wrapper that execs
   bash, and the spawn server the worker uses (`openmono_worker.sandbox.spawn`).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from openmono_contracts import ToolRequest
from openmono_contracts.sandbox import SandboxPolicy
from openmono_worker import WorkerSettings, run_tool, sandbox_support
from openmono_worker.sandbox import Confinement, Limits, spawn


def timed(fn: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


def show(name: str, values: list[float], base: list[float] | None = None) -> None:
    line = f"{name:38s} p50 {statistics.median(values):8.3f} ms  p99 {p(values, 99):8.3f} ms"
    if base:
        line += f"  ratio {statistics.median(values) / statistics.median(base):5.2f}x"
    print(line)


def sandbox_costs(tmp: Path, n: int = 60) -> None:
    """Section 4: each command with and without the read-only sandbox, interleaved."""
    support = sandbox_support()
    print(f"sandbox here: {support.describe()}")
    if not support.available:
        return
    ws = tmp / "sbx-ws"
    (ws / "compose").mkdir(parents=True)
    (ws / "compose" / ".env").write_text("LLAMA_API_KEY=x\n")
    for i in range(50):
        (ws / f"m{i}.py").write_text("".join(f"line {j}\n" for j in range(40)))
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    subprocess.run(["git", "-C", str(ws), "add", "."], check=True)
    settings = WorkerSettings(data_dir=tmp / "sbx-data")

    def call(command: str, sandbox: SandboxPolicy | None) -> None:
        req = ToolRequest(tool="Bash", params={"command": command}, call_id="b", session_id="b",
                          workspace=str(ws), sandbox=sandbox)  # fmt: skip
        result = run_tool(req, settings=settings)
        assert result.ok, result

    for command in ("true", "ls -la", "head -3 m1.py | wc -l", "git status --short"):
        plain: list[float] = []
        boxed: list[float] = []
        for _ in range(n):  # interleaved, so a busy moment hits both alike
            plain += timed(lambda c=command: call(c, None), 1)
            boxed += timed(lambda c=command: call(c, "read_only"), 1)
        show(f"Bash {command!r}", plain)
        show(f"Bash {command!r} sandboxed", boxed, plain)
        delta = statistics.median(boxed) - statistics.median(plain)
        print(f"{'':38s} +{delta:.3f} ms median (target +20 ms)")


def spawn_costs(n: int = 40) -> None:
    """Section 5: how a confinement is entered, per `bash -c true`."""

    def vfork() -> None:
        subprocess.run(["bash", "-c", "true"], check=True)

    def preexec() -> None:
        subprocess.run(["bash", "-c", "true"], check=True, preexec_fn=lambda: None)

    def wrapper() -> None:
        code = "import os; os.execvp('bash', ['bash', '-c', 'true'])"
        subprocess.run([sys.executable, "-I", "-S", "-c", code], check=True)

    def server() -> None:
        read_end, write_end = os.pipe()
        try:
            spawn(["bash", "-c", "true"], cwd=Path("/"), env={"PATH": os.environ["PATH"]},
                  stdout=write_end, confinement=Confinement(Limits()))  # fmt: skip
        finally:
            os.close(write_end)
        os.read(read_end, 1)  # EOF once bash has exited
        os.close(read_end)

    server()  # the server's own start, once per process
    base = timed(vfork, n)
    show("spawn: vfork (subprocess.run)", base)
    show("spawn: preexec_fn in this process", timed(preexec, n), base)
    show("spawn: python -I -S wrapper + exec", timed(wrapper, n), base)
    show("spawn: the spawn server", timed(server, n), base)
    ballast = [bytearray(1024 * 1024) for _ in range(200)]  # the agent's heap, roughly
    show("spawn: preexec_fn, 200 MB heap", timed(preexec, n), base)
    show("spawn: the spawn server, 200 MB heap", timed(server, n), base)
    del ballast


def in_container(image: str) -> None:
    """Section 4 in the worker image (default Docker: no extra capabilities, default seccomp)."""
    bench = Path(__file__).resolve().parent
    subprocess.run(
        ["docker", "run", "--rm", "-v", f"{bench}:/bench:ro", "-e", "HOME=/tmp", image,
         "python", "/bench/tools.py", "--sandbox-only"],
        check=True, timeout=900,
    )  # fmt: skip


def main() -> None:
    if "--sandbox-only" in sys.argv:
        sandbox_costs(Path(tempfile.mkdtemp()))
        return
    if "--container" in sys.argv:
        in_container(sys.argv[sys.argv.index("--container") + 1])
        return
    tmp = Path(tempfile.mkdtemp())
    ws = tmp / "ws"
    ws.mkdir()
    (ws / "f.py").write_text("".join(f"line {i}\n" for i in range(200)))
    settings = WorkerSettings(data_dir=tmp / "data")

    def req(tool: str, **params: object) -> ToolRequest:
        return ToolRequest(tool=tool, params=params, call_id="b", session_id="b", workspace=str(ws))

    bash_true = req("Bash", command="true")
    base = timed(lambda: subprocess.run(["bash", "-c", "true"], check=True), 100)
    show("baseline subprocess.run(bash true)", base)
    show("run_tool(Bash true)", timed(lambda: run_tool(bash_true, settings=settings), 100), base)

    path = ws / "f.py"

    def direct() -> str:
        lines = path.read_text().splitlines()
        return "\n".join(f"{i:6d}\t{s}" for i, s in enumerate(lines, 1))

    read = req("FileRead", file_path="f.py")
    base = timed(direct, 500)
    show("baseline read + number 200 lines", base)
    show(
        "run_tool(FileRead 200 lines)", timed(lambda: run_tool(read, settings=settings), 500), base
    )

    hold = req("Bash", command="sleep 100 | cat & sleep 100", timeout_ms=500)
    over = [t - 500 for t in timed(lambda: run_tool(hold, settings=settings), 10)]
    show("Bash timeout overshoot (timeout 0.5 s)", over)

    sandbox_costs(tmp)
    spawn_costs()


if __name__ == "__main__":
    main()
