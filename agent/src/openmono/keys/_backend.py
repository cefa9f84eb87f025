"""Where the key store is and how the gateway is told: one interface, two stacks.

`Native`: the store is `<data dir>/stack/keys`; this process changes it and sends the running
native gateway SIGUSR1 (Caddy reloads its Caddyfile, imports included, without a restart).
`Compose`: the store is the `gateway-keys` volume, which only the `keys` and `caddy` containers
mount; the command runs `python -m openmono_keys` in `keys` and then `docker compose kill -s
SIGUSR1 caddy`. Both wait until the gateway answers the new generation at `/_openmono/keys`, so
a key works, or no longer does, when the command returns.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

import httpx
from openmono_contracts.gatewaykeys import IssuedKey, KeyListing, UsageReport
from pydantic import BaseModel, ValidationError

from openmono.keys._errors import KeysCommandError

Say = Callable[[str], None]
T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
_WAIT_S = 10.0


class Backend(Protocol):
    """The store commands; changes return once the gateway applies them (or say it runs not)."""

    def add(self, name: str, expires_days: float | None, rate: str | None) -> IssuedKey: ...

    def rotate(self, name: str) -> IssuedKey: ...

    def revoke(self, name: str) -> None: ...

    def listing(self) -> KeyListing: ...

    def usage(self, since: str | None) -> UsageReport: ...


def wait_for_generation(read: Callable[[], int | None], generation: int, timeout_s: float) -> bool:
    """Poll `read()` until it gives `generation` or more; False after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    delay = 0.01
    while True:
        seen = read()
        if seen is not None and seen >= generation:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 1.5, 0.2)


def _generation(body: str) -> int | None:
    try:
        value = json.loads(body).get("generation")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) else None


def _read_generation(url: str) -> int | None:
    try:
        return _generation(httpx.get(f"{url}/_openmono/keys", timeout=2.0).text)
    except httpx.HTTPError:
        return None


class Native:
    """The native stack's store, applied by signalling its running gateway."""

    def __init__(
        self,
        folder: Path,
        usage_dir: Path,
        gateway: Callable[[], tuple[int, str] | None],
        say: Say,
    ) -> None:
        """`gateway()`: the running gateway's (pid, plain URL), or None when it does not run."""
        self.folder = folder
        self.usage_dir = usage_dir
        self._gateway = gateway
        self._say = say

    def add(self, name: str, expires_days: float | None, rate: str | None) -> IssuedKey:
        from openmono_keys import admin

        issued = self._call(lambda: admin.add(self.folder, name, expires_days, rate))
        self.apply(issued.generation)
        return issued

    def rotate(self, name: str) -> IssuedKey:
        from openmono_keys import KeyStore

        issued = self._call(lambda: KeyStore(self.folder).rotate(name))
        self.apply(issued.generation)
        return issued

    def revoke(self, name: str) -> None:
        from openmono_keys import KeyStore

        self.apply(self._call(lambda: KeyStore(self.folder).revoke(name)))

    def listing(self) -> KeyListing:
        from openmono_keys import admin

        return self._call(lambda: admin.listing(self.folder, self.usage_dir))

    def usage(self, since: str | None) -> UsageReport:
        from openmono_keys import admin

        return self._call(lambda: admin.report(self.usage_dir, since))

    def apply(self, generation: int) -> None:
        running = self._gateway()
        if running is None:
            self._say("the native gateway is not running: this applies when it starts")
            return
        pid, url = running
        os.kill(pid, signal.SIGUSR1)

        if not wait_for_generation(lambda: _read_generation(url), generation, _WAIT_S):
            raise KeysCommandError(
                f"the gateway did not load key table {generation} within {_WAIT_S:.0f} s: "
                "see its log (`openmono status`, logs/gateway.log)"
            )

    @staticmethod
    def _call(fn: Callable[[], T]) -> T:
        from openmono_keys import KeysError, UsageMistake

        try:
            return fn()
        except KeysError as exc:
            raise KeysCommandError(str(exc), mistake=isinstance(exc, UsageMistake)) from None
        except OSError as exc:
            raise KeysCommandError(f"the key store: {exc}") from None


class Compose:
    """The compose project's store, in the `keys` container's volume."""

    def __init__(self, base: list[str], say: Say, gateway: str | None = None) -> None:
        """`base`: `docker compose --env-file ... -f ...` (no subcommand); `gateway`: the plain
        URL the gateway is published on, asked for its generation (else through `exec`)."""
        self.base = base
        self._say = say
        self._gateway = gateway

    def add(self, name: str, expires_days: float | None, rate: str | None) -> IssuedKey:
        args = ["add", name]
        if expires_days is not None:
            args += ["--expires", repr(expires_days)]
        if rate is not None:
            args += ["--rate", rate]
        issued = self._exec(args, IssuedKey)
        self.apply(issued.generation)
        return issued

    def rotate(self, name: str) -> IssuedKey:
        issued = self._exec(["rotate", name], IssuedKey)
        self.apply(issued.generation)
        return issued

    def revoke(self, name: str) -> None:
        self.apply(self._exec(["revoke", name], _Generation).generation)

    def listing(self) -> KeyListing:
        return self._exec(["list"], KeyListing)

    def usage(self, since: str | None) -> UsageReport:
        return self._exec(["usage", *(["--since", since] if since else [])], UsageReport)

    def apply(self, generation: int) -> None:
        killed = self._run(["kill", "-s", "SIGUSR1", "caddy"], timeout=60)
        if killed.returncode != 0:
            raise KeysCommandError(f"could not signal the gateway: {killed.stderr.strip()[-300:]}")

        def read() -> int | None:
            if self._gateway:
                seen = _read_generation(self._gateway)
                if seen is not None:
                    return seen
            probe = ["wget", "-qO-", "http://127.0.0.1:8080/_openmono/keys"]
            done = self._run(["exec", "-T", "caddy", *probe], timeout=10)
            return _generation(done.stdout) if done.returncode == 0 else None

        if not wait_for_generation(read, generation, _WAIT_S * 3):
            raise KeysCommandError(
                f"the gateway did not load key table {generation}: see `docker compose logs caddy`"
            )

    def _exec(self, args: list[str], model: type[M]) -> M:
        done = self._run(["exec", "-T", "keys", "python", "-m", "openmono_keys", *args], 120)
        if done.returncode in (1, 2):
            try:
                message = str(json.loads(done.stdout)["error"])
            except (ValueError, KeyError, TypeError):
                message = (done.stderr or done.stdout).strip()[-300:]
            raise KeysCommandError(message, mistake=done.returncode == 2)
        if done.returncode != 0:
            raise KeysCommandError(
                "the compose `keys` service did not answer (is the gateway up? "
                f"`docker compose --profile server up -d`): {done.stderr.strip()[-300:]}"
            )
        try:
            return model.model_validate_json(done.stdout)
        except ValidationError:
            raise KeysCommandError(f"the `keys` service answered {done.stdout[:200]!r}") from None

    def _run(self, args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                [*self.base, *args],
                capture_output=True,
                text=True,
                timeout=timeout,
                start_new_session=True,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise KeysCommandError(f"docker compose: {exc}") from None


class _Generation(BaseModel):
    generation: int
