"""The Celery app both ends of the crawl queue build: the service that sends a job's first slices
(`CeleryRunner`) and the scrape worker that runs them and sends the next (`openmono_scrape.worker`),
so both agree on serializers and broker timeouts by construction."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from celery import Celery


def crawl_celery(name: str, broker_url: str) -> Celery:
    # imported here: a service without a broker never loads Celery (~0.3 s of its start)
    from celery import Celery

    app = Celery(name, broker=broker_url)
    app.conf.update(
        # JSON only: a pickled payload injected into Redis is refused, never deserialized
        task_serializer="json",
        accept_content=["json"],
        # Redis down: a send fails within seconds (the caller answers 503), never hangs
        broker_connection_timeout=3.0,
        broker_connection_retry_on_startup=True,
        task_publish_retry_policy={
            "max_retries": 2,
            "interval_start": 0,
            "interval_step": 0.2,
            "interval_max": 0.5,
        },
    )
    return app
