"""The one exception base of `openmono.sessions`."""

from openmono.errors import OpenMonoError


class SessionError(OpenMonoError):
    """A session cannot be found, created or read."""
