"""The one exception base of `openmono.acp`."""

from openmono.errors import OpenMonoError


class AcpError(OpenMonoError):
    """A request an ACP surface cannot serve (an unknown session, a bad mode)."""
