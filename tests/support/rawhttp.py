"""HTTP/1.1 on a raw socket, for upstreams that must misbehave in ways no HTTP server library
allows (closing a kept-alive connection, dropping a second request)."""

from __future__ import annotations

import socket


def read_request(conn: socket.socket) -> bytes | None:
    """One request read whole (its body by Content-Length); its head, or None if the peer
    closed before a head arrived."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head
