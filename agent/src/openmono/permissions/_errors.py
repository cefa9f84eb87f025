"""The one exception base of `openmono.permissions`."""


class PermissionsError(Exception):
    """A permission rule or `--allow` spec that cannot be understood."""
