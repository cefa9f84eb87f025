"""Why a web path did not answer. Internal: the tools turn these into results the model reads.

WorkerError
 └── WebPathError        -- one path (gateway or fallback) failed; `reason` says why
      ├── GatewayError   -- the gateway path failed: the caller falls back
      └── FallbackError  -- the built-in fallback failed as well
           └── SearchDegraded -- the fallback search engine refused us (bot challenge)
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
