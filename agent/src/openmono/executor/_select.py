"""`select_executor`: Celery when a broker URL is configured, the local executor otherwise.

The Celery executor lives in `openmono.executor.celery` and is imported only when a broker is set,
so the embedded default never imports Celery. That module must provide
`CeleryExecutor.from_settings(settings) -> Executor`. A configured broker without a usable Celery
executor is an error, never a silent fallback to running tools locally.
"""

from __future__ import annotations

import importlib

from openmono_worker import WorkerSettings

from openmono.executor._errors import ExecutorUnavailable
from openmono.executor._protocol import Executor, ExecutorSettings
from openmono.executor.local import LocalExecutor


def select_executor(settings: ExecutorSettings) -> Executor:
    """The executor the agent should use for these settings."""
    broker = settings.broker_url or None  # OPENMONO_BROKER_URL, resolved with every setting
    if not broker:
        return LocalExecutor(WorkerSettings(data_dir=settings.data_dir))
    try:
        module = importlib.import_module("openmono.executor.celery")
    except ImportError as exc:
        raise ExecutorUnavailable(
            f"OPENMONO_BROKER_URL is set ({broker}) but the Celery executor cannot be loaded: {exc}"
        ) from exc
    factory = getattr(getattr(module, "CeleryExecutor", None), "from_settings", None)
    if factory is None:
        raise ExecutorUnavailable(
            "OPENMONO_BROKER_URL is set but openmono.executor.celery has no "
            "CeleryExecutor.from_settings(settings)"
        )
    executor = factory(settings)
    if not isinstance(executor, Executor):
        raise ExecutorUnavailable("CeleryExecutor.from_settings did not return an Executor")
    return executor
