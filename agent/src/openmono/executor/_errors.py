"""The one exception base of `openmono.executor`."""

from openmono.errors import OpenMonoError


class ExecutorError(OpenMonoError):
    """An executor cannot be created or used (the message says what to fix)."""


class ExecutorUnavailable(ExecutorError):
    """A broker URL is configured but the Celery executor cannot be loaded."""
