"""The exception base of the native stack."""

from openmono.errors import OpenMonoError


class StackError(OpenMonoError):
    """Something the user must fix before the stack can run (message says what)."""
