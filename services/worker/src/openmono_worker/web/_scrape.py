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

from openmono_worker.web import _http
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
    resp = await _http.request(
        client,
        "POST",
        f"{gateway}/scrape",
        who="gateway scrape",
        error=GatewayError,
        timeout_s=timeout_s,
        content=request.model_dump_json(exclude_none=True),
        headers={**bearer(api_key), "Content-Type": "application/json"},
    )
    if resp.status_code != 200:
        raise GatewayError(_error_reason(resp))
    try:
        return ScrapeResponse.model_validate_json(resp.content)
    except ValidationError as exc:
        raise GatewayError("gateway scrape answered a body that is not a scrape result") from exc
