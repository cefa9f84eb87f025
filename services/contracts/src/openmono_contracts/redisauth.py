"""The broker's Redis password: how every client adds it to a Redis URL, and how a probe logs in.

Redis requires `REDIS_PASSWORD` (generated into the one env file by `openmono setup` / `up`). The
URLs people configure (`OPENMONO_BROKER_URL`, `SCRAPE_CACHE_REDIS_URL`, ...) stay without it, so a
URL shown in a log, a banner or `openmono config` never holds the secret: each client adds the
password from its settings (REDIS_PASSWORD) when it connects. A URL that names a password already
keeps its own. The password never goes on a command line (argv is world-readable through `ps`).
"""

from __future__ import annotations

import socket
from urllib.parse import quote, urlsplit, urlunsplit

from openmono_contracts.facts import REDIS_PASSWORD_ENV

__all__ = ["REDIS_PASSWORD_ENV", "ping", "with_password"]


def with_password(url: str, password: str) -> str:
    """`url` carrying `password` (each service's settings read REDIS_PASSWORD).

    An empty password, a URL that is not redis://|rediss://, or one that has a password already
    comes back unchanged."""
    secret = password
    parts = urlsplit(url)
    if not secret or parts.scheme not in ("redis", "rediss") or parts.password is not None:
        return url
    user = quote(parts.username or "", safe="")
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{user}:{quote(secret, safe='')}@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def ping(host: str, port: int, password: str, timeout_s: float = 2.0) -> bytes:
    """Log in with `password` (when given) and PING; the last reply line (`+PONG` when healthy,
    `-NOAUTH` / `-WRONGPASS` when the password is missing or wrong). Raises OSError."""
    commands = b""
    if password:
        commands += _command(b"AUTH", password.encode())
    commands += _command(b"PING")
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        sock.settimeout(timeout_s)
        sock.sendall(commands)
        replies = b""
        wanted = 2 if password else 1
        while replies.count(b"\r\n") < wanted:
            chunk = sock.recv(256)
            if not chunk:
                break
            replies += chunk
    lines = [line for line in replies.split(b"\r\n") if line]
    if password and lines and lines[0].startswith(b"-"):
        return lines[0]  # the AUTH refusal says more than the PING after it
    return lines[-1] if lines else b""


def _command(*parts: bytes) -> bytes:
    # RESP arrays: the password may hold any byte, an inline command would split it on spaces
    out = b"*%d\r\n" % len(parts)
    for part in parts:
        out += b"$%d\r\n%s\r\n" % (len(part), part)
    return out
