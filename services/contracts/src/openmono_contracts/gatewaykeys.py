"""Keys per agent box, usage per key and session affinity at the gateway (caddy/README.md, "Keys").

What crosses a process boundary here:
- the key store file (`keys.json`): written by `openmono keys` (natively, or inside the compose
  `keys` container), read by the same; the gateway reads only the Caddy snippets made from it;
- the answers of `python -m openmono_keys` (JSON on stdout) that `openmono keys` reads when the
  store lives in a compose volume;
- the access records the gateway writes (one JSON object a line) and `keys usage` reads;
- the token records the key service's tap writes (one JSON object a line, `TokenRecord`): the
  gateway sends each LLM request through the tap, with the key's name and the chosen replica in
  headers, and the tap reads the response's token counts on its way back;
- the headers the gateway sends the key service for a rate-limited key, and its 429 body;
- `X-OpenMono-Session`, the header the agent sends on every LLM request of a session.

A key is `omk_` + base64(`<id>:<secret>`): the gateway turns `Bearer omk_X` into `Basic X` and
checks it with Caddy's own `basic_auth` against a bcrypt hash, so the key itself is never stored.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, field_validator

__all__ = [
    "GATEWAY_HEADER",
    "KEY_HEADER",
    "KEY_NAME",
    "KEY_PREFIX",
    "OPERATOR",
    "RATE_HEADER",
    "SESSION_HEADER",
    "SHAPE_HEADER",
    "UPSTREAM_HEADER",
    "AccessRecord",
    "IssuedKey",
    "KeyFile",
    "KeyInfo",
    "KeyListing",
    "KeyRecord",
    "RateLimitedBody",
    "TokenRecord",
    "UsageReport",
    "UsageRow",
]

# `[a-z0-9-]{1,40}`: safe in a Caddyfile token, a log field and a shell line alike
KEY_NAME = re.compile(r"[a-z0-9-]{1,40}")
# what usage records call LLAMA_API_KEY, the operator's key; no box key may take the name
OPERATOR = "operator"
KEY_PREFIX = "omk_"
SESSION_HEADER = "X-OpenMono-Session"
# gateway -> key service, for a key with a rate limit: its name and its limit per minute
KEY_HEADER = "X-OpenMono-Key"
RATE_HEADER = "X-OpenMono-Key-Rate"
# gateway -> key service: which error shape the route speaks ("firecrawl" or the default)
SHAPE_HEADER = "X-OpenMono-Error-Shape"
# gateway -> token tap: the replica (host:port) this attempt goes to; the key's name rides in
# KEY_HEADER. The tap takes both off before the request goes on.
UPSTREAM_HEADER = "X-OpenMono-Upstream"
# gateway -> key service, on every request to /v1/rate and the token tap: the gateway's own
# secret (GATEWAY_SECRET), so no other local process can spend a key's rate budget or bill
# tokens to a key's name. The tap takes it off too.
GATEWAY_HEADER = "X-OpenMono-Gateway-Secret"


class KeyRecord(BaseModel):
    """One box key as stored: the bcrypt hash of its secret, never the key."""

    name: str = Field(pattern=r"^[a-z0-9-]{1,40}$")
    # 8 characters [a-z0-9]: the user name inside the key, what the gateway looks it up by
    id: str = Field(pattern=r"^[a-z0-9]{8}$")
    hash: str = Field(pattern=r"^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$")
    created_at: datetime
    expires_at: datetime | None = None
    rate_per_min: int | None = Field(default=None, ge=1)


class KeyFile(BaseModel):
    """`keys.json`: every live key. `generation` grows with each change; the gateway answers it
    at `/_openmono/keys` once it runs the matching config."""

    version: Literal[1] = 1
    generation: int = Field(default=0, ge=0)
    keys: list[KeyRecord] = Field(default_factory=list)


class IssuedKey(BaseModel):
    """What `keys add` / `keys rotate` return: the key itself, shown once and stored nowhere."""

    name: str
    key: str
    expires_at: datetime | None = None
    rate_per_min: int | None = None
    generation: int


class KeyInfo(BaseModel):
    """One row of `keys list` (never the key, never its hash)."""

    name: str
    created_at: datetime
    expires_at: datetime | None = None
    rate_per_min: int | None = None
    expired: bool = False


class AccessRecord(BaseModel):
    """One line of the gateway's access records as `keys usage` reads it.

    The gateway writes more fields (Caddy's own); these are the ones used. `key` is the key's
    name, `operator` or empty (refused): never the key. No URI query, no header, no body."""

    ts: float
    status: int
    size: int = 0
    duration: float = 0.0
    key: str = ""
    route: str = ""
    service: str = ""
    upstream_ms: float | None = None
    # written before the request is handled: the key name the header claims, and the path
    claim: str = ""
    path: str = ""

    @field_validator("key", "route", "service", "claim", "path", mode="before")
    @classmethod
    def _unset_is_empty(cls, value: object) -> object:
        # Caddy writes null for a placeholder that was never set (a refused request has no key)
        return "" if value is None else value

    @property
    def aborted(self) -> bool:
        """The client dropped the response mid-stream: the handler was aborted before the late
        fields (`key`, `route`, ...) were added. Only a request that passed the key check reaches
        an upstream, so its claim is its key."""
        return "key" not in self.model_fields_set

    @property
    def who(self) -> str:
        return self.claim if self.aborted else self.key

    @property
    def where(self) -> str:
        return self.route or self.path


class TokenRecord(BaseModel):
    """One LLM response as the token tap saw it: numbers only, never a prompt or a reply.

    `prompt_tokens` counts the whole prompt, `cached_tokens` the part llama-server took from its
    cache (what affinity saves). A count the response did not carry (an error, a stream the client
    dropped before the last event, an endpoint without usage) is None; `complete` is False when
    the response did not reach its end."""

    ts: float
    key: str
    route: str
    status: int
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    complete: bool = True


class UsageRow(BaseModel):
    """Usage of one key on one route over the report's window."""

    key: str
    route: str
    requests: int = 0
    statuses: dict[str, int] = Field(default_factory=dict)
    bytes_out: int = 0
    upstream_ms: float = 0.0
    dropped: int = 0  # responses the client stopped reading mid-stream (counted in statuses too)
    last_used: float | None = None
    # from the token records: the responses that carried counts, and their sums
    counted: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0


class UsageReport(BaseModel):
    """`keys usage`: rows per key and route since `since` (unix time; None = all records)."""

    since: float | None = None
    rows: list[UsageRow] = Field(default_factory=list)
    records: int = 0
    unreadable: int = 0


class KeyListing(BaseModel):
    """`keys list`: the keys and the usage of every key (refused requests under the key "")."""

    keys: list[KeyInfo] = Field(default_factory=list)
    usage: UsageReport = Field(default_factory=UsageReport)


class RateLimitedBody(BaseModel):
    """The 429 the key service answers for a key past its limit (`Retry-After` says the same)."""

    error: Literal["rate_limited"] = "rate_limited"
    key: str
    limit_per_min: int
    retry_after_s: int
