"""The native stack's keeper (stack/keeper.py) on real short-lived processes: a crash is started
again with backoff, a crash loop is given up, a settings exit is given up at once, SIGTERM stops
it without a restart."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from openmono.stack.keeper import KeeperState, backoff_s, main, read_state


def test_a_settings_exit_is_given_up_at_once(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    started = time.monotonic()
    assert main(["--name", "x", "--state", str(state), "--", "sh", "-c", "exit 78"]) == 1
    assert time.monotonic() - started < 5
    kept = read_state(state)
    assert kept is not None and kept.restarts == 0 and kept.last_exit == 78
    assert "settings cannot work" in kept.given_up


def test_a_crash_loop_is_restarted_then_given_up(tmp_path: Path) -> None:
    state, runs = tmp_path / "s.json", tmp_path / "runs"
    command = ["sh", "-c", f"echo run >> {runs}; exit 3"]
    args = ["--name", "x", "--state", str(state), "--limit", "3", "--backoff", "0.05"]
    assert main([*args, "--", *command]) == 1
    assert runs.read_text().count("run") == 3  # started, then again twice: the limit is 3
    kept = read_state(state)
    assert kept is not None and kept.restarts == 2 and kept.last_exit == 3
    assert kept.given_up == "crashed 3 times in a row (last: exit code 3)"


def test_the_backoff_doubles_up_to_a_bound() -> None:
    assert [backoff_s(n, 1.0) for n in (1, 2, 3, 6, 20)] == [1.0, 2.0, 4.0, 30.0, 30.0]


@contextmanager
def _kept(state: Path, *command: str) -> Iterator[tuple[subprocess.Popen[bytes], KeeperState]]:
    """A keeper of `command` in its own group, once it has started it; killed at the end."""
    keeper = subprocess.Popen(
        [sys.executable, "-m", "openmono.stack.keeper", "--name", "x", "--state", str(state),
         "--backoff", "0", "--", *command],
        start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while (kept := read_state(state)) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert kept is not None and kept.pid
        yield keeper, kept
    finally:
        if keeper.poll() is None:
            os.killpg(keeper.pid, signal.SIGKILL)
            keeper.wait(5)


def test_sigterm_stops_the_service_and_nothing_is_started_again(tmp_path: Path) -> None:
    state = tmp_path / "s.json"
    with _kept(state, "sleep", "30") as (keeper, kept):
        os.killpg(keeper.pid, signal.SIGTERM)  # as `openmono down` does: the whole group
        assert keeper.wait(10) == 0
        after = read_state(state)
        assert after is not None and after.pid == kept.pid and after.restarts == 0
        assert (
            not Path(f"/proc/{kept.pid}").exists()
            or "Z" in Path(f"/proc/{kept.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        )


def test_sigusr1_to_the_keeper_reaches_the_service(tmp_path: Path) -> None:
    # the pid file holds the keeper's pid; `openmono keys` signals it to reload the key table
    state, got = tmp_path / "s.json", tmp_path / "got"
    script = f'trap "echo usr1 >> {got}" USR1; while :; do sleep 0.05; done'
    with _kept(state, "sh", "-c", script) as (keeper, kept):
        time.sleep(0.3)  # the shell has set its trap
        os.kill(keeper.pid, signal.SIGUSR1)  # the keeper alone, as the keys command does
        deadline = time.monotonic() + 20
        while not got.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert got.read_text() == "usr1\n"
        assert keeper.poll() is None
        again = read_state(state)
        assert again is not None and again.pid == kept.pid
