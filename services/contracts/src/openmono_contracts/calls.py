"""The Celery call protocol both sides must agree on (docs/architecture.md §7), apart from the
payload models.

- `TASK_NAME`: the one task; `HARD_LIMIT_EXTRA_S`: hard limit = the call's `timeout_s` + this.
- Redis call-state keys, two per Celery task id (the worker's `callstate` explains the protocol):

      openmono:call:<id>:claim   "<host>:<pid>" of the process that started the call, or
                                 `ABANDONED` when the agent gave up before any process did
      openmono:call:<id>:alive   refreshed by the process running the call; expires when it dies

- `lost_worker_error`: what a side-effecting call answers when the process running it died (the
  worker says it on a redelivery, the agent when the heartbeat stops), worded once.
"""

from __future__ import annotations

__all__ = [
    "ABANDONED",
    "CALL_KEY_PREFIX",
    "HARD_LIMIT_EXTRA_S",
    "TASK_NAME",
    "alive_key",
    "claim_key",
    "lost_worker_error",
]

TASK_NAME = "openmono.tools.run"
HARD_LIMIT_EXTRA_S = 5.0

CALL_KEY_PREFIX = "openmono:call:"
ABANDONED = "abandoned"


def claim_key(task_id: str) -> str:
    return f"{CALL_KEY_PREFIX}{task_id}:claim"


def alive_key(task_id: str) -> str:
    return f"{CALL_KEY_PREFIX}{task_id}:alive"


def lost_worker_error(tool: str, call_id: str) -> str:
    """The error a side-effecting call gets when the process running it died."""
    return (
        f"tool worker lost while running {tool} (call {call_id}): the call may have partly run; "
        "it is not run again because side-effecting calls never run twice"
    )
