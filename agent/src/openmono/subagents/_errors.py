"""The one exception base of `openmono.subagents`."""


class SubagentError(Exception):
    """A sub-agent that cannot be started (an unknown type)."""
