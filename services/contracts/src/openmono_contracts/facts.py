"""Facts more than one process relies on, defined once: the default ports, where state lives, the
names of the variables the whole stack shares, which of them are secrets, and how an on/off switch
is read.

The agent (its settings and the native stack), the tool worker and the scrape service import these
from here, so "where is the gateway port set" has one answer.
"""

from __future__ import annotations

# --- default ports (127.0.0.1 for the native stack; what compose publishes on the host) ---
GATEWAY_PORT = 47480
GATEWAY_TLS_PORT = 47443
LLAMA_PORT = 7474
SCRAPE_PORT = 5000
REDIS_PORT = 6379
ACP_PORT = 7475
# the key service (rate limits of agent boxes' keys); compose: keys:8090 inside the network
KEYS_PORT = 47482
# the key service's token tap (the gateway's forward proxy for LLM requests); compose: keys:8091
KEYS_TAP_PORT = 47483
# the LLM route's router over several llama-server replicas (native stack), and its metrics
LLM_ROUTER_PORT = 47484
LLM_ROUTER_METRICS_PORT = 47485
# the router's replica view for the gateway's /services (names and health only)
LLM_ROUTER_STATUS_PORT = 47486
# the native stack's llama-server replicas 2..N (LLAMA_REPLICAS); the first one is on LLAMA_PORT.
# Not LLAMA_PORT + 1: that is the agent's ACP_PORT.
LLAMA_REPLICA_PORT = 47490
LOOPBACK = "127.0.0.1"

# --- where state lives ---
DATA_DIR_ENV = "OPENMONO_DATA_DIR"
DEFAULT_DATA_DIR = "~/.openmono"
BROKER_URL_ENV = "OPENMONO_BROKER_URL"
# a project's own OpenMono folder (settings, memory, playbooks), inside the workspace
PROJECT_DIR = ".openmono"
# memory: the project's inside the workspace, the user's under the data dir
PROJECT_MEMORY_DIR = f"{PROJECT_DIR}/memory"
USER_MEMORY_DIR = "memory"

# --- the names of the env file's keys that more than one command reads or writes ---
API_KEY_ENV = "LLAMA_API_KEY"  # the gateway's bearer (the agent's key on this box)
UPSTREAM_KEY_ENV = "LLAMA_UPSTREAM_KEY"  # llama-server's own key, sent by the gateway only
ACP_TOKEN_ENV = "OPENMONO_ACP_TOKEN"  # noqa: S105 -- the variable's name, not a token
FRP_TOKEN_ENV = "FRP_AUTH_TOKEN"  # noqa: S105 -- the variable's name, not a token
# the password the broker's Redis requires; clients add it to OPENMONO_BROKER_URL (redisauth.py)
REDIS_PASSWORD_ENV = "REDIS_PASSWORD"  # noqa: S105 -- the variable's name, not a password
# the gateway's own secret: only Caddy and the key service hold it (gatewaykeys.GATEWAY_HEADER)
GATEWAY_SECRET_ENV = "GATEWAY_SECRET"  # noqa: S105 -- the variable's name, not a secret
# the on/off switch of each web service (`openmono setup search|scraper` writes them)
SEARCH_SWITCH_ENV = "WEB_SEARCH_ENABLED"
SCRAPE_SWITCH_ENV = "WEB_SCRAPE_ENABLED"

# --- secrets ---
# Generated into the env file by `make up` / `openmono setup` when empty or a placeholder.
# LLAMA_UPSTREAM_KEY is not among them: the native runner generates it only when it starts
# llama-server itself (an external LLAMA_UPSTREAM checks its own key); compose falls back to
# LLAMA_API_KEY.
GENERATED_SECRETS = (
    API_KEY_ENV,
    "SEARXNG_SECRET",
    ACP_TOKEN_ENV,
    REDIS_PASSWORD_ENV,
    GATEWAY_SECRET_ENV,
)
# Every variable that holds a secret: masked when shown, never handed to a tool's command.
SECRET_NAMES = frozenset(
    {
        *GENERATED_SECRETS,
        UPSTREAM_KEY_ENV,
        "LLAMA_UPSTREAM_KEYS",
        FRP_TOKEN_ENV,
        "OPENMONO_LLM_API_KEY",
        "OPENMONO_GATEWAY_CA",
        "WORKER_GATEWAY_KEY",
    }
)

# --- on/off switches as people write them ---
TRUTHY = frozenset({"1", "true", "yes", "on"})
FALSY = frozenset({"0", "false", "no", "off"})


def parse_switch(value: object) -> bool | None:
    """True / False for a recognised switch, None for "not set" (None or an empty string).

    Anything else is an error rather than a silent guess: a typo in `OPENMONO_WEB_SEARCH` should
    not quietly decide where queries go.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if not text:
            return None
        if text in TRUTHY:
            return True
        if text in FALSY:
            return False
    raise ValueError(f"not an on/off switch: {value!r} (use true/false, 1/0, yes/no, on/off)")
