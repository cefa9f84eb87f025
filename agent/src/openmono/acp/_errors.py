"""The one exception base of `openmono.acp`."""


class AcpError(Exception):
    """A request an ACP surface cannot serve (an unknown session, a bad mode)."""
