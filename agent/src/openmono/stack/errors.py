"""The exception base of the native stack."""


class StackError(Exception):
    """Something the user must fix before the stack can run (message says what)."""
