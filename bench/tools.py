"""Tool execution overhead and Bash timeout latency, against baselines measured in the same run.

1. `run_tool(Bash "true")` vs `subprocess.run(["bash", "-c", "true"])`: what the process-group,
   selector loop and result building cost per command.
2. `run_tool(FileRead)` vs reading and numbering the file directly: the validation/guard overhead.
3. Bash timeout latency: a 0.5 s timeout on `sleep 100 | cat & sleep 100` (a grandchild holding the
   pipe); the overshoot past the timeout is what the issue bounds (≤ 2 s).
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from openmono_contracts import ToolRequest
from openmono_worker import WorkerSettings, run_tool


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


def main() -> None:
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


if __name__ == "__main__":
    main()
