"""The one exception base of `openmono.permissions`."""

from openmono.errors import OpenMonoError


class PermissionsError(OpenMonoError):
    """A permission rule or `--allow` spec that cannot be understood."""
