"""The keeper of one native service: runs it, starts it again when it crashes, gives up on it when
it keeps crashing (`python -m openmono.stack.keeper --name N --state FILE -- COMMAND...`).

Compose restarts a container that dies (`restart: unless-stopped`); this is the same for the native
stack. `openmono up` starts each service under a keeper, in the keeper's process group, so `down`
still stops the whole group at once (the keeper sees the SIGTERM and does not restart anything).

- A crash is started again after a backoff that doubles (1 s, 2 s, 4 s … at most 30 s).
- A service that ran for `STABLE_S` before it crashed starts a new count: one crash a day is not a
  crash loop.
- After `limit` crashes in a row the keeper gives up: it says so in the service's log and in the
  state file, which `openmono status` shows, and exits. `openmono up` starts it again.
- An exit code of 2 or 78 (a usage error, EX_CONFIG) is given up at once: the settings cannot
  work, and starting it again would only repeat it.

The state file (`<pids>/<name>.state.json`, written whole by a rename) carries the service's own
pid, the restart count and the last exit, so `openmono status` can show them.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType

from openmono_contracts.privatefs import write_private

STABLE_S = 30.0
MAX_BACKOFF_S = 30.0
# exit codes that say "these settings cannot work": a usage error, EX_CONFIG (sysexits.h)
SETTINGS_EXITS = frozenset({2, 78})


@dataclass(frozen=True)
class KeeperState:
    """What the keeper knows of its service, for `up` and `status`."""

    pid: int | None
    restarts: int = 0
    # how the last run ended: an exit code, or -N for signal N (Popen's convention); None = never
    last_exit: int | None = None
    last_exit_at: float | None = None
    # why the keeper stopped starting it ("" while it keeps it running)
    given_up: str = ""

    def describe_exit(self) -> str:
        return describe(self.last_exit)


def describe(code: int | None) -> str:
    if code is None:
        return "not exited"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def state_path(pidfile: Path) -> Path:
    return pidfile.with_name(pidfile.name.replace(".json", ".state.json"))


def read_state(path: Path) -> KeeperState | None:
    try:
        data = json.loads(path.read_text())
        return KeeperState(
            pid=int(data["pid"]) if data.get("pid") else None,
            restarts=int(data.get("restarts", 0)),
            last_exit=None if data.get("last_exit") is None else int(data["last_exit"]),
            last_exit_at=None if data.get("last_exit_at") is None else float(data["last_exit_at"]),
            given_up=str(data.get("given_up", "")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_state(path: Path, state: KeeperState) -> None:
    write_private(path, json.dumps(asdict(state)))


def backoff_s(crashes_in_a_row: int, first_s: float) -> float:
    return float(min(first_s * 2 ** max(crashes_in_a_row - 1, 0), MAX_BACKOFF_S))


class Keeper:
    def __init__(self, name: str, command: list[str], state: Path, limit: int, first_s: float):
        self.name, self.command, self.state = name, command, state
        self.limit, self.first_s = limit, first_s
        self.stopping = threading.Event()
        self.child: subprocess.Popen[bytes] | None = None

    def say(self, line: str) -> None:
        # the keeper's stdout is the service's log (runner.spawn)
        print(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} keeper: {line}", flush=True)

    def stop(self, signum: int, frame: FrameType | None) -> None:
        self.stopping.set()
        self.forward(signum, frame)

    def forward(self, signum: int, _frame: FrameType | None) -> None:
        """A signal the service acts on (the gateway reloads its key table on SIGUSR1): the pid
        file holds the keeper's pid, so the keeper passes it on."""
        child = self.child
        if child is not None and child.poll() is None:
            child.send_signal(signum)

    def run(self) -> int:
        restarts = in_a_row = 0
        last: int | None = None
        last_at: float | None = None
        while True:
            started = time.monotonic()
            self.child = subprocess.Popen(self.command)
            _write_state(self.state, KeeperState(self.child.pid, restarts, last, last_at))
            code = self.child.wait()
            if self.stopping.is_set():
                return 0
            ran = time.monotonic() - started
            last, last_at = code, time.time()
            in_a_row = 1 if ran >= STABLE_S else in_a_row + 1
            why = self._give_up(code, in_a_row)
            if why:
                self.say(f"{self.name} {why}; gave up (`openmono up` starts it again)")
                _write_state(self.state, KeeperState(None, restarts, last, last_at, why))
                return 1
            delay = backoff_s(in_a_row, self.first_s)
            self.say(
                f"{self.name} ended after {ran:.1f} s ({describe(code)}); "
                f"starting it again in {delay:.1f} s (crash {in_a_row} of {self.limit} in a row)"
            )
            _write_state(self.state, KeeperState(None, restarts, last, last_at))
            if self.stopping.wait(delay):
                return 0
            restarts += 1

    def _give_up(self, code: int, in_a_row: int) -> str:
        if code in SETTINGS_EXITS:
            return f"ended with {describe(code)}: its settings cannot work (its log says why)"
        if in_a_row >= self.limit:
            return f"crashed {in_a_row} times in a row (last: {describe(code)})"
        return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m openmono.stack.keeper")
    parser.add_argument("--name", required=True)
    parser.add_argument("--state", required=True, type=Path)
    parser.add_argument("--limit", type=int, default=5)
    parser.add_argument("--backoff", type=float, default=1.0)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to keep")
    keeper = Keeper(args.name, command, args.state, max(args.limit, 1), max(args.backoff, 0.0))
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, keeper.stop)
    for signum in (signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(signum, keeper.forward)
    return keeper.run()


if __name__ == "__main__":
    sys.exit(main())
