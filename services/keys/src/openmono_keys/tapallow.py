"""Which replicas the token tap (openmono_keys.tap) may dial: it is no open proxy for whoever
reaches its port."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from collections.abc import Iterable


class Allowed:
    """The replicas the tap may dial: `host:port` entries, names resolved again on a miss.

    One lookup at a time, and a miss waits for a lookup that started after it asked: requests
    that miss together (the first ones, a new `--scale` replica) share one lookup and none is
    refused for arriving while it ran; a stream of unlisted targets costs one lookup after
    another, never several at once."""

    def __init__(self, entries: Iterable[str]) -> None:
        self.entries = [e for e in entries if e]
        self._resolved: set[str] = set()
        self._started = float("-inf")  # when the last lookup started
        self._lock = asyncio.Lock()

    async def check(self, target: str) -> bool:
        if target in self.entries or target in self._resolved:
            return True
        asked = time.monotonic()
        async with self._lock:
            if self._started < asked:
                self._started = time.monotonic()
                self._resolved = await self._resolve()
        return target in self._resolved

    async def _resolve(self) -> set[str]:
        loop = asyncio.get_running_loop()
        out: set[str] = set()
        for entry in self.entries:
            host, _, port = entry.rpartition(":")
            host = host.strip("[]")
            try:
                ipaddress.ip_address(host)
                continue  # a literal is matched as written
            except ValueError:
                pass
            try:
                infos = await asyncio.wait_for(
                    loop.getaddrinfo(host, int(port), type=socket.SOCK_STREAM), 2.0
                )
            except (OSError, TimeoutError, ValueError):
                continue
            for info in infos:
                addr = str(info[4][0])
                out.add(f"[{addr}]:{port}" if ":" in addr else f"{addr}:{port}")
        return out
