"""WebFetch through the gateway: `POST {gateway}/scrape` (the scrape service behind it).

A 200 is a page (whatever the site answered; its code is in `status`). Every other answer, a body
that is not the contract, or a timeout is a `GatewayError`, so the caller falls back to a direct
fetch. The scrape service's error code and message are kept in the reason.
"""

from __future__ import annotations

import httpx
from openmono_contracts import ScrapeErrorBody, ScrapeRequest, ScrapeResponse
from openmono_contracts.gateway import bearer
from pydantic import ValidationError

from openmono_worker.web._errors import GatewayError


def _error_reason(resp: httpx.Response) -> str:
    try:
        body = ScrapeErrorBody.model_validate_json(resp.content)
    except ValidationError:
        kind = resp.headers.get("content-type", "").split(";")[0] or "no content type"
        return f"gateway scrape answered HTTP {resp.status_code} ({kind})"
    return f"gateway scrape answered HTTP {resp.status_code} {body.error}: {body.message[:200]}"


async def scrape(
    client: httpx.AsyncClient,
    gateway: str,
    api_key: str | None,
    request: ScrapeRequest,
    timeout_s: float,
) -> ScrapeResponse:
    """Ask the gateway's scrape service for one page."""
    try:
        resp = await client.post(
            f"{gateway}/scrape",
            content=request.model_dump_json(exclude_none=True),
            headers={**bearer(api_key), "Content-Type": "application/json"},
            timeout=timeout_s,
        )
    except httpx.TimeoutException as exc:
        raise GatewayError(f"gateway scrape did not answer within {timeout_s:g} s") from exc
    except httpx.HTTPError as exc:
        raise GatewayError(f"gateway scrape unreachable ({type(exc).__name__})") from exc
    if resp.status_code != 200:
        raise GatewayError(_error_reason(resp))
    try:
        return ScrapeResponse.model_validate_json(resp.content)
    except ValidationError as exc:
        raise GatewayError("gateway scrape answered a body that is not a scrape result") from exc
