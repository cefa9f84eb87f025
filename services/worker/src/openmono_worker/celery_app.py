"""The Celery app of the tool worker (docs/architecture.md §7): Redis as broker and result backend,
JSON only.

Run it with `python -m openmono_worker` (same as `celery -A openmono_worker.celery_app worker`).
The agent's Celery executor builds its client app with the same `create_app`, so both sides agree
on serializers, timeouts and transport options by construction.

Every worker setting lives in the one commented block of `create_app`; the knobs an operator may
turn come from `WorkerSettings` (env prefix `WORKER_`, plus the stack-wide `OPENMONO_BROKER_URL`).
"""

from __future__ import annotations

from typing import Any

from celery import Celery
from openmono_contracts.calls import HARD_LIMIT_EXTRA_S, TASK_NAME

from openmono_worker.routing import RoutingError, ServedRoutes, served_routes
from openmono_worker.settings import WorkerSettings

# docs/architecture.md §7: the task's name and its hard limit (timeout + HARD_LIMIT_EXTRA_S) are
# protocol.
__all__ = ["HARD_LIMIT_EXTRA_S", "TASK_NAME", "app", "consume_served_queues", "create_app"]


def create_app(settings: WorkerSettings | None = None) -> Celery:
    """The Celery app for `settings` (read from the environment when omitted)."""
    cfg = settings if settings is not None else WorkerSettings()
    app = Celery("openmono", broker=cfg.broker_url, backend=cfg.broker_url)
    app.conf.update(
        # --- Serialization: JSON only. A pickled payload is refused, never deserialized, so a
        #     message injected into Redis cannot run code in the worker.
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        result_accept_content=["json"],
        # --- Time limits. The agent sets both per call (soft = the call's timeout_s, hard = +5 s);
        #     these defaults only cover a message sent without them. At the soft limit the task
        #     cancels the tool (its process group dies); at the hard limit the pool process is
        #     killed, and ToolCallRequest kills the tool's process groups first.
        task_soft_time_limit=cfg.default_timeout_s,
        task_time_limit=cfg.default_timeout_s + HARD_LIMIT_EXTRA_S,
        # --- Delivery. One message per pool process at a time: a slow call never holds a second
        #     one hostage, and parallel read-only calls spread over the processes.
        worker_prefetch_multiplier=1,
        worker_concurrency=cfg.concurrency,
        # --- Acknowledgement, decided per call (see _request.ToolCallRequest). The task is
        #     declared acks_late + reject_on_worker_lost so a READ-ONLY call whose process died is
        #     requeued and runs again; a SIDE-EFFECTING call is acknowledged the moment a process
        #     accepts it, so it is never redelivered, and its Redis claim key refuses a second run
        #     in the few cases a broker could still hand it out (callstate.py).
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,
        # Redis lost mid-call: a running read-only call is stopped (it comes back with its
        # message); side-effecting calls were acknowledged already and run to their end.
        worker_cancel_long_running_tasks_on_connection_loss=True,
        # --- Results: Redis, expired after a while; no "STARTED" state (the claim key says it).
        result_expires=cfg.result_expires_s,
        task_track_started=False,
        task_ignore_result=False,
        # --- Hygiene: recycle pool processes; no task events (nobody consumes them).
        worker_max_tasks_per_child=cfg.max_tasks_per_child,
        worker_send_task_events=False,
        task_send_sent_event=False,
        worker_hijack_root_logger=False,
        # --- Broker connection: fail fast when Redis is down (the agent reports "tool worker
        #     unreachable" within seconds instead of hanging); the worker itself keeps retrying.
        broker_connection_retry_on_startup=True,
        broker_connection_timeout=cfg.connect_timeout_s,
        task_publish_retry_policy={
            "max_retries": 2,
            "interval_start": 0,
            "interval_step": 0.2,
            "interval_max": 0.5,
        },
        broker_transport_options=_transport_options(cfg),
        redis_socket_connect_timeout=cfg.connect_timeout_s,
        redis_backend_health_check_interval=30,
        result_backend_transport_options={"retry_policy": {"max_retries": 2}},
        # Routing (routing.py): the agent sends every call to the queue of its route; a worker
        # consumes the queues of what it serves, chosen at startup (`consume_served_queues`).
        # Nothing is sent to the default queue, and no worker consumes it.
        task_default_queue="openmono.tools",
        include=["openmono_worker.tasks"],
    )
    return app


def consume_served_queues(app: Celery, settings: WorkerSettings) -> ServedRoutes:
    """Point a starting worker at the queues of what it serves (ids created where missing).

    Called from the `celeryd_init` signal, before the worker sets up its consumer: an explicit
    `-Q` still wins (and every call is checked against its route anyway). A root that cannot
    serve stops the worker with the reason, instead of a worker that never gets a call.
    """
    try:
        served = served_routes(settings, create=True)
    except RoutingError as exc:
        raise SystemExit(f"openmono worker: {exc}") from exc
    names = list(served.queues)
    queues = app.amqp.queues
    for name in names:
        queues[name]  # created the way a sender creates it (create_missing)
    queues.select(names)
    return served


def _transport_options(cfg: WorkerSettings) -> dict[str, Any]:
    return {
        "visibility_timeout": cfg.visibility_timeout_s,
        "unacked_restore_interval": cfg.restore_interval_s,
        # Scan on every sweep: the sweep interval above is then the only knob.
        "unacked_restore_throttle": 1,
        "socket_connect_timeout": cfg.connect_timeout_s,
    }


app = create_app()
