"""Where the native gateway keeps its TLS state, and the internal key llama-server checks.

Caddy stores its internal CA under `$XDG_DATA_HOME/caddy` (the runner points XDG_DATA_HOME of every
child at `<stack dir>/xdg-data`), so the CA — the trust anchor every agent box pins — survives
restarts and lives beside the rest of the stack's state. llama-server is given its own key
(`LLAMA_UPSTREAM_KEY`), never the client-facing one: rotating `LLAMA_API_KEY` then restarts only the
gateway and a loaded model keeps serving.
"""

from __future__ import annotations

from pathlib import Path

from openmono_contracts.facts import GATEWAY_SECRET_ENV, REDIS_PASSWORD_ENV, UPSTREAM_KEY_ENV

from openmono.stack.envfile import ensure_secret
from openmono.stack.settings import StackSettings


def caddy_data_dir(settings: StackSettings) -> Path:
    """Caddy's storage of the native stack (what XDG_DATA_HOME/caddy is for its gateway)."""
    return settings.stack_dir / "xdg-data" / "caddy"


def ca_cert_path(settings: StackSettings) -> Path:
    """The internal CA's root certificate, written by Caddy the first time the gateway starts."""
    return caddy_data_dir(settings) / "pki" / "authorities" / "local" / "root.crt"


def ensure_upstream_key(env_file: Path, settings: StackSettings) -> bool:
    """Generate LLAMA_UPSTREAM_KEY into `.env` when the stack runs llama-server and none is set.

    An external LLAMA_UPSTREAM keeps what the operator set (empty: the client's key is forwarded).
    Returns whether a key was generated; `settings` is updated in place.
    """
    if settings.llama_upstream or settings.llama_upstream_key.get_secret_value():
        return False
    value, generated = ensure_secret(env_file, UPSTREAM_KEY_ENV)
    settings.llama_upstream_key = type(settings.llama_upstream_key)(value)
    return generated


def ensure_redis_password(env_file: Path, settings: StackSettings) -> bool:
    """Generate REDIS_PASSWORD into `.env` when the stack runs Redis and none is set (an env file
    older than the password). Returns whether one was generated; `settings` is updated in place."""
    if not settings.openmono_broker_url or settings.redis_password.get_secret_value():
        return False
    value, generated = ensure_secret(env_file, REDIS_PASSWORD_ENV)
    settings.redis_password = type(settings.redis_password)(value)
    return generated


def ensure_gateway_secret(env_file: Path, settings: StackSettings) -> bool:
    """Generate GATEWAY_SECRET into `.env` when none is set (an env file older than it): the
    gateway and the key service always run together. Returns whether one was generated."""
    if settings.gateway_secret.get_secret_value().strip():
        return False
    value, generated = ensure_secret(env_file, GATEWAY_SECRET_ENV)
    settings.gateway_secret = type(settings.gateway_secret)(value)
    return generated
