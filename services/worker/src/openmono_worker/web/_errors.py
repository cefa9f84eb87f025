"""Why a web path did not answer. Internal: the tools turn these into results the model reads.

WorkerError
 └── WebPathError        -- one path (gateway or fallback) failed; `reason` says why
      ├── GatewayError   -- the gateway path failed: the caller falls back
      └── FallbackError  -- the built-in fallback failed as well
           ├── SearchDegraded -- the fallback search engine refused us (bot challenge)
           └── FallbackOff    -- the fallback would leave the box, and the user did not opt in
"""

from __future__ import annotations

from openmono_worker.errors import WorkerError


class WebPathError(WorkerError):
    """A web path failed; `reason` is short, human-readable and holds no secret."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class GatewayError(WebPathError):
    """The gateway path failed (status, error body, bad JSON, timeout, unreachable)."""


class FallbackError(WebPathError):
    """The built-in fallback failed too (or refused the target)."""


class SearchDegraded(FallbackError):
    """The fallback search engine answered with a challenge: results may exist, we got none."""


# How the user lets WebSearch leave this box without the gateway; the tool result repeats it.
OPT_IN = (
    "set web.public_fallback to true (`openmono config set web.public_fallback true`, or "
    "OPENMONO_WEB_PUBLIC_FALLBACK=1) to let WebSearch ask DuckDuckGo and read the pages it "
    "finds directly from this box"
)


class FallbackOff(FallbackError):
    """The fallback would send the call off this box without the gateway, and the user has not
    opted in (`WebAccess.public_fallback`): nothing was sent."""
