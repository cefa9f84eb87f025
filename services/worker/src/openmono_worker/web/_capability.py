"""Decide, per call, whether a web service is asked through the gateway (docs/architecture.md §6,
steps 1-3).

1. An explicit switch wins: `ToolRequest.web.search|scrape`, else `OPENMONO_WEB_SEARCH|SCRAPE`
   in this process. Off means the fallback; on means the gateway without asking `/services`.
2. No gateway URL: the fallback.
3. Otherwise the gateway's cached `/services` answer decides.

The `Route` says where to go and, for the fallback, why: the tool result repeats it to the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import httpx
from openmono_contracts import WebAccess, trust

from openmono_worker.settings import WebToolSettings
from openmono_worker.web import _probe
from openmono_worker.web._access import gateway_base

Service = Literal["search", "scrape"]


@dataclass(frozen=True)
class Route:
    """`gateway` set: use it. `gateway` None: use the fallback, for `reason`."""

    gateway: str | None
    reason: str


def _explicit(service: Service, web: WebAccess, settings: WebToolSettings) -> tuple[bool, str]:
    """(value, where it came from) of the explicit switch, or raise LookupError when unset."""
    value = web.search if service == "search" else web.scrape
    if value is not None:
        return value, f"web.{service}"
    value = settings.search if service == "search" else settings.scrape
    if value is not None:
        return value, f"OPENMONO_WEB_{service.upper()}"
    raise LookupError(service)


async def resolve(
    client: httpx.AsyncClient, service: Service, web: WebAccess, settings: WebToolSettings
) -> Route:
    """Where this call of `service` goes."""
    # The agent may hand over `llm.endpoint` as it is (`.../v1`): the services hang off the root.
    gateway = gateway_base(web.gateway)
    if gateway is not None:
        try:
            # the bearer key must never cross a network in clear: the direct fallback instead
            trust.check_plain_http(gateway, insecure_http=web.insecure_http)
        except trust.TrustError as exc:
            return Route(None, str(exc))
    try:
        enabled, source = _explicit(service, web, settings)
    except LookupError:
        pass
    else:
        if not enabled:
            return Route(None, f"{service} through the gateway is switched off ({source}=false)")
        if gateway is None:
            return Route(None, f"{source}=true but no gateway URL is configured")
        return Route(gateway, f"{source}=true")
    if gateway is None:
        return Route(None, "no gateway URL is configured (web.gateway / llm.endpoint)")
    answer = await _probe.probe(
        client,
        gateway,
        web.api_key,
        timeout_s=settings.probe_timeout_s,
        ttl_s=settings.probe_ttl_s,
        failure_ttl_s=settings.probe_failure_ttl_s,
        anchor=web.ca,
    )
    if answer.info is None:
        return Route(None, f"the gateway's {answer.failure}")
    offered = answer.info.search if service == "search" else answer.info.scrape
    if not offered:
        return Route(None, f"the gateway offers no {service} service (/services: {service}=false)")
    return Route(gateway, f"/services: {service}=true")
