"""A plain TCP forwarder: stands in for frps + frpc (the relay) between an agent and the gateway.

Every connection to `127.0.0.1:<port>` is piped byte for byte to the target; nothing is parsed or
rewritten, exactly like frp's tcp proxy. `connections` counts what went through it, and
`recorded()` returns every byte it carried, both directions (what a relay operator could read).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field


@dataclass
class Relay:
    port: int
    connections: int = 0
    _seen: bytearray = field(default_factory=bytearray)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def tls_url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def record(self, data: bytes) -> None:
        with self._lock:
            self._seen += data

    def recorded(self) -> bytes:
        with self._lock:
            return bytes(self._seen)


def _pipe(src: socket.socket, dst: socket.socket, relay: Relay) -> None:
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            relay.record(data)
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


def _serve_one(client: socket.socket, target: tuple[str, int], relay: Relay) -> None:
    try:
        upstream = socket.create_connection(target, timeout=10)
    except OSError:
        client.close()
        return
    upstream.settimeout(None)
    # as frp (Go sets TCP_NODELAY on every TCP connection): no Nagle + delayed-ACK 40 ms stalls
    for sock in (client, upstream):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    back = threading.Thread(target=_pipe, args=(upstream, client, relay), daemon=True)
    back.start()
    _pipe(client, upstream, relay)
    back.join(120)
    client.close()
    upstream.close()


@contextmanager
def tcp_relay(target_port: int, target_host: str = "127.0.0.1") -> Iterator[Relay]:
    """Listen on a free loopback port and forward to `target_host:target_port`."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.1)
    relay = Relay(int(listener.getsockname()[1]))
    stop = threading.Event()

    def accept_loop() -> None:
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            client.settimeout(None)
            relay.connections += 1
            threading.Thread(
                target=_serve_one, args=(client, (target_host, target_port), relay), daemon=True
            ).start()

    thread = threading.Thread(target=accept_loop, daemon=True)
    thread.start()
    try:
        yield relay
    finally:
        stop.set()
        thread.join(5)
        listener.close()
