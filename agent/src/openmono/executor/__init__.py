"""Executors: how the agent loop runs tool calls (docs/architecture.md §1, §7).

`Executor` is the protocol (`run`, `cancel`, `aclose`); `LocalExecutor` runs the worker's `run_tool`
in-process (the embedded default); the Celery executor (`openmono.executor.celery`, loaded lazily)
sends each call to the worker over Redis. `select_executor(settings)` picks one.
"""

from openmono.executor._errors import ExecutorError, ExecutorUnavailable
from openmono.executor._protocol import Executor, ExecutorSettings
from openmono.executor._select import select_executor
from openmono.executor.local import LocalExecutor

__all__ = [
    "Executor",
    "ExecutorError",
    "ExecutorSettings",
    "ExecutorUnavailable",
    "LocalExecutor",
    "select_executor",
]
