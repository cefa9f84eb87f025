"""The shape of a box key, and how the gateway finds it without storing it.

A key is `omk_` + standard base64 of `<id>:<secret>`: `id` is 8 characters `[a-z0-9]`, `secret`
42 URL-safe characters (248 random bits). 51 bytes encode to 68 characters without padding, and
the first 9 bytes (`<id>:`) to the first 12, so the gateway can read the id's encoding off the
front of the header (`lookup_prefix`) and match it exactly, then check the whole credential with
Caddy's `basic_auth` (`Bearer omk_X` becomes `Basic X`) against the bcrypt hash of the secret.
"""

from __future__ import annotations

import base64
import secrets
import string

import bcrypt
from openmono_contracts.gatewaykeys import KEY_PREFIX

_ID_ALPHABET = string.ascii_lowercase + string.digits
ID_LENGTH = 8
# token_urlsafe(31) is 42 characters: with `<id>:` 51 bytes, a multiple of 3 (no `=` padding)
_SECRET_BYTES = 31
# bcrypt's minimum cost: the secret is random, so slowness adds no safety, and the gateway pays
# the cost once per key and config load (Caddy caches the verdict)
BCRYPT_ROUNDS = 4


def new_id(taken: set[str]) -> str:
    while True:
        candidate = "".join(secrets.choice(_ID_ALPHABET) for _ in range(ID_LENGTH))
        if candidate not in taken:
            return candidate


def new_secret() -> str:
    return secrets.token_urlsafe(_SECRET_BYTES)


def compose(key_id: str, secret: str) -> str:
    """The key an agent box holds."""
    return KEY_PREFIX + base64.b64encode(f"{key_id}:{secret}".encode()).decode("ascii")


def lookup_prefix(key_id: str) -> str:
    """The first 12 characters of every key with this id, after `omk_` (what the gateway's map
    is keyed on)."""
    return base64.b64encode(f"{key_id}:".encode()).decode("ascii")


def hash_secret(secret: str) -> str:
    return bcrypt.hashpw(secret.encode(), bcrypt.gensalt(rounds=BCRYPT_ROUNDS)).decode("ascii")
