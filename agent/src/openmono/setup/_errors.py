"""The one exception base of `openmono.setup`."""

from openmono.errors import OpenMonoError


class SetupError(OpenMonoError):
    """`openmono setup` / `openmono tunnel` cannot do what was asked (the message says why)."""
