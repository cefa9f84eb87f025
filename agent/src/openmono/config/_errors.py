"""The one exception base of `openmono.config`."""


class ConfigError(Exception):
    """A settings file cannot be read or written, or a value does not validate."""
