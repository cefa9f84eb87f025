"""The one exception base of `openmono.subagents`."""

from openmono.errors import OpenMonoError


class SubagentError(OpenMonoError):
    """A sub-agent that cannot be started (an unknown type)."""
