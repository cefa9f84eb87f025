"""The one exception base of `openmono.setup`."""


class SetupError(Exception):
    """`openmono setup` / `openmono tunnel` cannot do what was asked (the message says why)."""
