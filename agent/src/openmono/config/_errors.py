"""The one exception base of `openmono.config`."""

from openmono.errors import OpenMonoError


class ConfigError(OpenMonoError):
    """A settings file cannot be read or written, or a value does not validate."""


class SettingInvalid(ConfigError, ValueError):
    """A settings value that does not validate; also a ValueError, so a pydantic validator may
    raise it and the error names the field it belongs to."""
