"""The minimal SSE upstream (bench/_sse_upstream.py) as the benches and tests start it.

One place builds its command line and waits for it: the gateway and relay benches, the replica
bench and the gateway fault test all stand it in for llama-server.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.procs import free_port, running

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "_sse_upstream.py"


def sse_upstream_command(
    port: int,
    *,
    events: int | None = None,
    interval_ms: float | None = None,
    slots: int | None = None,
    name: str | None = None,
) -> list[str]:
    """The command for one upstream on 127.0.0.1:`port`; unset options keep its defaults."""
    cmd = [sys.executable, str(SCRIPT), "--port", str(port)]
    options = {"--events": events, "--interval-ms": interval_ms, "--slots": slots, "--name": name}
    for flag, value in options.items():
        if value is not None:
            cmd += [flag, str(value)]
    return cmd


@contextmanager
def sse_upstream(
    log: Path,
    *,
    events: int | None = None,
    interval_ms: float | None = None,
    slots: int | None = None,
    name: str | None = None,
) -> Iterator[str]:
    """Run one upstream on a free port until the block ends; yields its `http://` URL."""
    port = free_port()
    cmd = sse_upstream_command(port, events=events, interval_ms=interval_ms, slots=slots, name=name)
    url = f"http://127.0.0.1:{port}"
    # /health answers at once, never waiting for a slot (as llama-server's)
    with running(cmd, log, ready_url=f"{url}/health", timeout_s=30):
        yield url
