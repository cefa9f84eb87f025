"""The one exception base of `openmono.sessions`."""


class SessionError(Exception):
    """A session cannot be found, created or read."""
