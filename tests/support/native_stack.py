"""The native stack (`openmono up|down`) run as a user would, from tests: the CLI in a subprocess,
an isolated environment (own `.env`, data dir and free ports), and a sweep that leaves nothing
running even when a test fails. Also reads the `export` lines that `openmono setup join` prints."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.clean_env import clean_environ
from tests.support.procs import ROOT, free_port

OPENMONO = [sys.executable, "-m", "openmono.cli"]


def run_openmono(
    args: list[str], env: dict[str, str], timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*OPENMONO, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def our_processes(data_dir: Path) -> list[int]:
    """Pids whose command line or environment mentions this test's data dir (i.e. ours)."""
    found = []
    needle = str(data_dir).encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            blob = (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in blob and state != "Z":
            found.append(int(entry.name))
    return found


@contextmanager
def native_stack_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment of one test-owned native stack; on exit `openmono down`, then SIGKILL for
    anything of ours still alive. The developer's LLAMA_*/OPENMONO_* settings never leak in."""
    env = {k: v for k, v in clean_environ().items() if not k.startswith("LLAMA_")}
    env.update(
        OPENMONO_ROOT=str(ROOT),
        OPENMONO_ENV_FILE=str(tmp_path / "stack.env"),
        OPENMONO_DATA_DIR=str(tmp_path / "data"),
        OPENMONO_FRPC_CONFIG=str(tmp_path / "frpc.toml"),
        GATEWAY_PORT=str(free_port()),
        GATEWAY_TLS_PORT=str(free_port()),
        LLAMA_PORT=str(free_port()),
        KEYS_PORT=str(free_port()),
        KEYS_TAP_PORT=str(free_port()),
        # the router and replicas 2..N (LLAMA_REPLICAS): free too, so a test with several
        # replicas passes beside a running `make up`
        LLM_ROUTER_PORT=str(free_port()),
        LLM_ROUTER_METRICS_PORT=str(free_port()),
        LLM_ROUTER_STATUS_PORT=str(free_port()),
        LLAMA_REPLICA_PORT=str(free_port()),
        LLAMA_CTX_SIZE="1024",
        WEB_SEARCH_ENABLED="false",
        WEB_SCRAPE_ENABLED="false",
        OPENMONO_BROKER_URL="",
    )
    try:
        yield env
    finally:
        run_openmono(["down"], env, timeout=60)
        for pid in our_processes(tmp_path / "data"):
            os.kill(pid, signal.SIGKILL)


def join_exports(lines: str) -> dict[str, str]:
    """What a POSIX shell holds after running the `export` lines `openmono setup join` printed."""
    script = lines + '\nprintf "%s" "$OPENMONO_LLM_ENDPOINT"; printf "\\0%s" '
    script += '"$OPENMONO_LLM_API_KEY" "$OPENMONO_GATEWAY_CA"'
    out = subprocess.run(
        ["sh", "-c", script], capture_output=True, text=True, timeout=10, check=True
    ).stdout
    endpoint, key, ca = out.split("\0")
    return {"endpoint": endpoint, "key": key, "ca": ca}
