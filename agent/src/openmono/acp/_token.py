"""The one bearer token of `openmono serve`: `OPENMONO_ACP_TOKEN`, natively and in compose.

Resolved like every setting (`--token` > `acp.token` / `OPENMONO_ACP_TOKEN` from the environment,
the env file or the settings files). With none set, one is generated into the env file
(`compose/.env` of the checkout, mode 0600): the file compose hands to its agent, so the token a
client reads there is the token every server of this box wants. A token an earlier version kept
in `<data dir>/acp-token` is moved into the env file (so its clients keep working), never used
beside it.
"""

from __future__ import annotations

from pathlib import Path

from openmono_contracts.facts import ACP_TOKEN_ENV

from openmono.config import ConfigError, Settings, ensure_secret, set_env

TOKEN_ENV = ACP_TOKEN_ENV
LEGACY_FILE = "acp-token"


def resolve_token(settings: Settings, given: str | None, env_file: Path | None) -> tuple[str, str]:
    """The bearer to require and where it comes from (said in the server's log line)."""
    if given:
        return given, "from --token"
    if settings.acp.token is not None and settings.acp.token.get_secret_value():
        return settings.acp.token.get_secret_value(), f"{TOKEN_ENV} (acp.token)"
    if env_file is None:
        raise ConfigError(
            f"no ACP token: set {TOKEN_ENV} (or acp.token), pass --token, or name an env file "
            "for a generated one (OPENMONO_ENV_FILE; an OpenMono checkout has compose/.env)"
        )
    legacy = settings.data_dir / LEGACY_FILE
    saved = _read(legacy)
    if saved:
        set_env(env_file, {TOKEN_ENV: saved})
        legacy.unlink()
        return saved, f"{TOKEN_ENV} in {env_file} (moved there from {legacy})"
    token, generated = ensure_secret(env_file, TOKEN_ENV)
    return token, f"{TOKEN_ENV} {'generated into' if generated else 'in'} {env_file}"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""
