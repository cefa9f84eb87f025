"""Bash calls through Celery that leave children behind, then the zombies under the worker.

Runs where the worker runs: the native test imports it, the compose test pipes it into `python -`
inside a worker container. So: standard library, `openmono_contracts` and `openmono_worker` only.

    python - send WORKSPACE N     N calls on WORKSPACE's route, every result checked: JSON report
    python - zombies [SECONDS]    the zombie children of this box's worker processes, waited up to
                                  SECONDS for them to be none: JSON report

The calls cycle through eight kinds: plain output, a background child that holds the output pipe
(`sleep 0.2 &`), a double fork, a `setsid` escape, a failing exit, stderr, and two detached calls
(`background: true`), one of which leaves a child of its own. A detached call's result is intact
when its log holds what it printed and its status file says exit code 0.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

KINDS = 8


@dataclass(frozen=True)
class Call:
    index: int
    params: dict[str, object]
    output: str | None  # the exact output of a foreground call
    error: str | None = None
    job_line: str | None = None  # what a detached call's log must hold


def make_call(i: int) -> Call:
    tag = f"call-{i}"
    done = f"{tag}\n[exit code 0]"
    kind = i % KINDS
    if kind == 0:
        return Call(i, {"command": f"echo {tag}"}, done)
    if kind == 1:
        return Call(i, {"command": f"sleep 0.2 & echo {tag}"}, done)
    if kind == 2:  # the inner subshell exits at once: its sleep is an orphan
        return Call(i, {"command": f"( (sleep 0.2 >/dev/null 2>&1 &) ); echo {tag}"}, done)
    if kind == 3:  # a session of its own: the group kill after the call does not reach it
        cmd = f"setsid sleep 0.3 </dev/null >/dev/null 2>&1 & echo {tag}"
        return Call(i, {"command": cmd}, done)
    if kind == 4:
        failed = f"{tag}\n[exit code 3]"
        return Call(i, {"command": f"echo {tag}; exit 3"}, failed, "command failed (exit code 3)")
    if kind == 5:
        return Call(i, {"command": f"echo a; echo {tag} >&2"}, f"a\n{done}")
    if kind == 6:
        bg = {"command": f"sleep 0.2; echo job-{i}", "background": True}
        return Call(i, bg, None, job_line=f"job-{i}")
    bg = {"command": f"(sleep 0.3; echo late-{i}) & echo job-{i}", "background": True}
    return Call(i, bg, None, job_line=f"job-{i}")


def _check(call: Call, result: dict[str, object]) -> tuple[str | None, Path | None, Path | None]:
    """What is wrong with a result (None: intact); a detached call's log and status files."""
    output = str(result.get("output"))
    if call.job_line is None:
        want_ok = call.error is None
        if result.get("ok") is not want_ok or result.get("error") != call.error:
            return f"ok={result.get('ok')} error={result.get('error')!r}", None, None
        if output != call.output:
            return f"output {output!r}", None, None
        return None, None, None
    if not result.get("ok") or not output.startswith("started in the background: pid "):
        return f"detached call said {output!r} ({result.get('error')})", None, None
    log = Path(output.split("log: ")[1].splitlines()[0])
    status = Path(output.rsplit(" in ", 1)[1].strip())
    return None, log, status


def _job_problem(call: Call, log: Path, status: Path, deadline: float) -> str | None:
    while not status.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        data = json.loads(status.read_text())
    except (OSError, ValueError) as exc:
        return f"no status: {exc}"
    if data.get("exit_code") != 0:
        return f"status {data}"
    if call.job_line not in log.read_text():
        return f"log {log.read_text()!r}"
    return None


def send(workspace: str, count: int, broker_url: str | None = None) -> dict[str, object]:
    """Send `count` calls at once, wait for every result and every detached job; a report."""
    from openmono_contracts import ToolRequest
    from openmono_contracts.routing import route_for
    from openmono_worker import WorkerSettings
    from openmono_worker.celery_app import TASK_NAME, create_app

    settings = WorkerSettings(broker_url=broker_url) if broker_url else WorkerSettings()
    app = create_app(settings)
    route = route_for(workspace)
    calls = [make_call(i) for i in range(count)]
    start = time.monotonic()
    try:
        pending = []
        for call in calls:
            req = ToolRequest(
                tool="Bash",
                params=call.params,
                call_id=f"load-{call.index}-{uuid.uuid4().hex[:6]}",
                session_id="bash-load",
                workspace=workspace,
                timeout_s=60,
                route=route,
            )
            payload = req.model_dump(mode="json")
            pending.append(app.send_task(TASK_NAME, args=[payload], queue=route.queue))
        bad: dict[int, str] = {}
        jobs: list[tuple[Call, Path, Path]] = []
        for call, res in zip(calls, pending, strict=True):
            problem, log, status = _check(call, res.get(timeout=300))
            if problem is not None:
                bad[call.index] = problem
            elif log is not None and status is not None:
                jobs.append((call, log, status))
        deadline = time.monotonic() + 60
        for call, log, status in jobs:
            problem = _job_problem(call, log, status, deadline)
            if problem is not None:
                bad[call.index] = problem
    finally:
        app.close()
    return {
        "calls": count,
        "detached": len(jobs),
        "bad": bad,
        "seconds": round(time.monotonic() - start, 1),
    }


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, session) of `pid`; None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[3])


def _processes() -> dict[int, tuple[str, int, int]]:
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            found[int(entry.name)] = stat
    return found


def worker_mains() -> list[int]:
    """The main processes of every `python -m openmono_worker` here (pool processes excluded)."""
    found = []
    table = _processes()
    for pid, (_, ppid, _) in table.items():
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[1:3] == [b"-m", b"openmono_worker"] and ppid not in found:
            parent = Path(f"/proc/{ppid}/cmdline")
            with_parent = parent.read_bytes().split(b"\0") if parent.exists() else []
            if with_parent[1:3] != [b"-m", b"openmono_worker"]:
                found.append(pid)
    return found


def zombie_children(main: int) -> tuple[list[int], list[int]]:
    """(the worker's processes: main and its pool, the zombies among their children)."""
    table = _processes()
    own = table.get(main)
    if own is None:
        return [], []
    workers = [main] + [
        pid for pid, (_, ppid, sid) in table.items() if ppid == main and sid == own[2]
    ]
    zombies = [pid for pid, (state, ppid, _) in table.items() if ppid in workers and state == "Z"]
    return workers, zombies


def wait_no_zombies(mains: list[int], timeout_s: float) -> dict[str, object]:
    """Poll until no worker process has a zombie child (or time is up); the last count."""
    deadline = time.monotonic() + timeout_s
    while True:
        report = {str(m): zombie_children(m) for m in mains}
        count = sum(len(z) for _, z in report.values())
        if count == 0 or time.monotonic() >= deadline:
            return {
                "workers": {m: w for m, (w, _) in report.items()},
                "zombies": {m: z for m, (_, z) in report.items()},
                "count": count,
            }
        time.sleep(0.1)


def main(argv: list[str]) -> int:
    if argv[:1] == ["send"] and len(argv) == 3:
        print(json.dumps(send(argv[1], int(argv[2]))))
        return 0
    if argv[:1] == ["zombies"]:
        timeout = float(argv[1]) if len(argv) > 1 else 10.0
        print(json.dumps(wait_no_zombies(worker_mains(), timeout)))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main(sys.argv[1:]))
