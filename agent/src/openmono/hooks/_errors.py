"""The one exception base of `openmono.hooks`."""

from openmono.errors import OpenMonoError


class HookError(OpenMonoError):
    """A hook definition that cannot be used (a matcher that is not a valid regex)."""
