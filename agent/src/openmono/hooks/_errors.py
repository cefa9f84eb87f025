"""The one exception base of `openmono.hooks`."""


class HookError(Exception):
    """A hook definition that cannot be used (a matcher that is not a valid regex)."""
