"""The gateway's own secret (GATEWAY_SECRET): what makes a request to the key service the gateway's.

The key service listens on loopback (natively) or the compose network, where any local process or
container can reach it. Its `/v1/rate` spends a key's rate budget and its token tap writes token
records under whatever key name the request carries, so both answer only a request that carries
the secret only Caddy and this service hold (`X-OpenMono-Gateway-Secret`, issue 36, finding 9).
Compared in constant time; an empty secret matches nothing.
"""

from __future__ import annotations

import hmac


def from_gateway(given: str | bytes | None, secret: str) -> bool:
    """Whether `given` (the header's value as received) is the gateway's secret."""
    if not secret or given is None:
        return False
    raw = given if isinstance(given, bytes) else given.encode("latin-1", "replace")
    return hmac.compare_digest(raw, secret.encode())
