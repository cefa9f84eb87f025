"""A job's webhook events, POSTed the way Firecrawl does, through the SSRF guard, retried a little.

Payload: `{success, type, id, webhookId, data, error?, metadata?}`; `type` is
`crawl.<event>` or `batch_scrape.<event>`. Each attempt checks the URL with the guard (the
scrape service's policy, carried in the job) and connects to the checked address; redirects are
not followed. An attempt that fails to connect, times out (10 s) or gets 408/429/5xx is tried
again, at most `ATTEMPTS` times in all, 1 s then 2 s apart; a refusal by the guard or another
4xx is final. A webhook that cannot be delivered is logged and never fails the job.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import httpx
from openmono_contracts.crawl import JobSpec
from openmono_contracts.netguard import NetGuard, NetGuardError, policy_resolver

log = logging.getLogger("openmono.crawl.webhook")

ATTEMPTS = 3
TIMEOUT_S = 10.0
_BACKOFF_S = (1.0, 2.0)
_RETRY_STATUSES = frozenset({408, 425, 429})


class Webhooks:
    """Sends one job's events; `drain` waits for those still being delivered."""

    def __init__(self, spec: JobSpec) -> None:
        self.spec = spec
        self.hook = spec.webhook
        self.prefix = "crawl" if spec.kind == "crawl" else "batch_scrape"
        policy = spec.guard
        self.guard = NetGuard(
            policy.allow_cidrs, resolver=policy_resolver(policy.static_hosts, policy.system_dns)
        )
        self._pending: set[asyncio.Task[None]] = set()
        self.delivered = 0
        self.failed = 0

    def wants(self, event: str) -> bool:
        if self.hook is None:
            return False
        events = self.hook.events
        return events is None or event in events or f"{self.prefix}.{event}" in events

    def payload(
        self, event: str, success: bool, data: list[Any], error: str | None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "success": success,
            "type": f"{self.prefix}.{event}",
            "id": self.spec.id,
            "webhookId": str(uuid.uuid4()),
            "data": data,
        }
        if error is not None:
            body["error"] = error
        if self.hook is not None and self.hook.metadata is not None:
            body["metadata"] = self.hook.metadata
        return body

    def send(
        self,
        event: str,
        *,
        success: bool = True,
        data: list[Any] | None = None,
        error: str | None = None,
    ) -> None:
        """Start delivering `event` in the background (when the webhook wants it)."""
        if not self.wants(event):
            return
        task = asyncio.create_task(self._deliver(self.payload(event, success, data or [], error)))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def drain(self) -> None:
        if self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    async def _deliver(self, body: dict[str, Any]) -> None:
        assert self.hook is not None
        for attempt in range(ATTEMPTS):
            if attempt:
                await asyncio.sleep(_BACKOFF_S[min(attempt - 1, len(_BACKOFF_S) - 1)])
            try:
                status = await self._post(body)
            except NetGuardError as exc:
                log.warning("webhook %s refused by the guard: %s", body["type"], exc.reason)
                self.failed += 1
                return
            except (httpx.HTTPError, OSError) as exc:
                log.info("webhook %s attempt %d failed: %s", body["type"], attempt + 1, exc)
                continue
            if 200 <= status < 300:
                self.delivered += 1
                return
            if status < 500 and status not in _RETRY_STATUSES:
                break
            log.info("webhook %s attempt %d: HTTP %d", body["type"], attempt + 1, status)
        log.warning("webhook %s not delivered to the job's URL", body["type"])
        self.failed += 1

    async def _post(self, body: dict[str, Any]) -> int:
        assert self.hook is not None
        target = await self.guard.check(self.hook.url)
        headers = {**self.hook.headers, "Content-Type": "application/json"}
        headers["Host"] = target.host_header
        extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
        async with httpx.AsyncClient(
            trust_env=False, follow_redirects=False, timeout=TIMEOUT_S
        ) as client:
            request = client.build_request(
                "POST", target.pinned_url(), json=body, headers=headers, extensions=extensions
            )
            response = await client.send(request)
            return response.status_code
