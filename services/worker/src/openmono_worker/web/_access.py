"""Which gateway the web tools talk to, resolved once by the agent (docs/architecture.md §6,
steps 1-2).

The agent calls `resolve_web_access` with its settings and puts the result in every
`ToolRequest.web`; the worker never reads the agent's settings files. The gateway defaults to the
LLM endpoint, so an agent box that knows one relay URL also finds search and scrape behind it.
"""

from __future__ import annotations

from openmono_contracts import WebAccess
from openmono_contracts.facts import parse_switch


def gateway_base(url: str | None) -> str | None:
    """`http://host:port/v1/` -> `http://host:port`: the gateway root the services hang off."""
    if url is None:
        return None
    base = url.strip().rstrip("/")
    if base.endswith("/v1"):
        base = base[: -len("/v1")]
    if not base:
        return None
    if "://" not in base:
        base = f"http://{base}"
    return base


def resolve_web_access(
    *,
    gateway: str | None,
    llm_endpoint: str | None,
    api_key: str | None,
    search: object = None,
    scrape: object = None,
) -> WebAccess:
    """`web.gateway` else `llm.endpoint`; switches parsed (None = ask the gateway's `/services`)."""
    return WebAccess(
        gateway=gateway_base(gateway) or gateway_base(llm_endpoint),
        api_key=api_key or None,
        search=parse_switch(search),
        scrape=parse_switch(scrape),
    )
