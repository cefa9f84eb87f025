"""What a failed container test keeps of its stack before the fixture's `down` takes it away: every
service's `docker compose logs` (timestamped), and the router's worker list and Prometheus metrics
as the operator sees them through the gateway. Saved under the test's tmp dir; the path is printed
and added to the failure, so a run that fails once on a loaded machine can still be read."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.containers.conftest import Project

# the router's lines worth a glance (retries, queue, circuit breaker, per-worker load); the whole
# exposition is saved next to it
_ROUTER_LINES = re.compile(r"retr|queue|circuit|cb_|concurren|running|load|error|fail", re.I)


def save_state(p: Project, folder: Path) -> Path:
    """Writes the stack's logs and the router's state into `folder`; returns it. Each part is
    best-effort: a gateway that no longer answers still leaves the logs."""
    folder.mkdir(parents=True, exist_ok=True)
    done = p.run("--profile", "*", "logs", "--no-color", "--timestamps", check=False, timeout=120)
    (folder / "compose.log").write_text(done.stdout + done.stderr)
    for name, path in (
        ("router-workers.json", "/router/workers"),
        ("router-metrics.txt", "/router/metrics"),
    ):
        try:
            resp = httpx.get(f"{p.gateway}{path}", headers=p.auth, timeout=10)
            text = f"HTTP {resp.status_code}\n{resp.text}"
        except httpx.HTTPError as exc:
            text = f"not fetched: {exc!r}"
        (folder / name).write_text(text)
    metrics = (folder / "router-metrics.txt").read_text().splitlines()
    (folder / "router-summary.txt").write_text(
        "\n".join(m for m in metrics if not m.startswith("#") and _ROUTER_LINES.search(m))
    )
    return folder


@contextlib.contextmanager
def kept_on_failure(p: Project, folder: Path) -> Iterator[None]:
    """Runs the block; on any failure saves the stack's state into `folder` first, prints where,
    and lets the failure go on (with the path added to its message)."""
    try:
        yield
    except BaseException as exc:
        with contextlib.suppress(Exception):
            saved = save_state(p, folder)
            print(f"\nthe stack's logs and the router's state: {saved}")
            print((saved / "router-summary.txt").read_text()[-3000:])
            exc.add_note(f"the stack's logs and the router's state: {saved}")
        raise
