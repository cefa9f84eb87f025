"""Upstream lists of the gateway: `LLAMA_UPSTREAM`, `SEARXNG_UPSTREAM`, `SCRAPE_UPSTREAM` and the
per-upstream keys of remote inference boxes (`LLAMA_UPSTREAM_KEYS`).

Users write lists with commas (`127.0.0.1:7474,10.0.0.7:8080`, blanks allowed); Caddy substitutes
`{$VAR}` into the Caddyfile as text, so the gateway gets them space-separated, one upstream a token
(`to a b c`). Keys become one `host:port key` line each: the Caddyfile pastes them into a `map`
keyed on the upstream a request goes to (caddy/README.md, "Remote inference boxes"). Everything is
checked here, before Caddy sees it, because a value pasted into a Caddyfile could otherwise add
tokens or placeholders of its own.
"""

from __future__ import annotations

import re

from openmono.stack.errors import StackError

# host:port, an IPv4/IPv6 literal or a DNS name; no path, no user info, no placeholder braces
_UPSTREAM = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):[0-9]{1,5}$")
# what a bearer token can be: visible ASCII, never braces (Caddy placeholders), quotes or `#`
# (a Caddyfile comment)
_KEY = re.compile(r"^[A-Za-z0-9._~+/=:!$%&*^|-]+$")


def strip_scheme(url: str) -> str:
    """`http://host:port/` → `host:port` (the Caddyfile takes host:port upstreams)."""
    url = url.strip()
    for prefix in ("http://", "https://"):
        if url.startswith(prefix):
            url = url[len(prefix) :]
    return url.rstrip("/")


def parse_upstreams(value: str, name: str) -> list[str]:
    """`a:1, http://b:2/ c:3` → `["a:1", "b:2", "c:3"]`; anything else is a StackError."""
    items = [strip_scheme(part) for part in re.split(r"[,\s]+", value) if part.strip()]
    for item in items:
        if not _UPSTREAM.match(item) or not 0 < int(item.rsplit(":", 1)[1]) < 65536:
            raise StackError(
                f"{name}: {item!r} is not host:port (or http://host:port); "
                "separate several upstreams with commas"
            )
    if len(set(items)) != len(items):
        raise StackError(f"{name}: an upstream is listed twice ({value!r})")
    return items


def caddy_list(upstreams: list[str]) -> str:
    """The form the Caddyfile's `{$VAR}` takes: one token per upstream."""
    return " ".join(upstreams)


def parse_keys(value: str, upstreams: list[str]) -> dict[str, str]:
    """`LLAMA_UPSTREAM_KEYS` = `host:port=key,host:port=key`: the key each listed remote checks.

    Every named upstream must be one of `upstreams` (a key for a box the gateway never asks is a
    typo, and would silently not apply).
    """
    keys: dict[str, str] = {}
    for part in (p.strip() for p in value.split(",")):
        if not part:
            continue
        upstream, sep, key = part.partition("=")
        upstream = strip_scheme(upstream)
        if not sep or not key:
            raise StackError(f"LLAMA_UPSTREAM_KEYS: {part!r} is not host:port=key")
        if upstream not in upstreams:
            raise StackError(
                f"LLAMA_UPSTREAM_KEYS names {upstream}, which is not in LLAMA_UPSTREAM"
            )
        if not _KEY.match(key):
            raise StackError(
                f"LLAMA_UPSTREAM_KEYS: the key of {upstream} may hold only visible ASCII "
                "without blanks, quotes, backslashes, braces or #"
            )
        keys[upstream] = key
    return keys


def caddy_key_lines(keys: dict[str, str]) -> str:
    """One `host:port key` line per remote upstream: the entries of the Caddyfile's key map."""
    return "\n".join(f"{upstream} {key}" for upstream, key in keys.items())
