"""The one exception base of the contracts package."""


class ContractError(Exception):
    """Base of every error raised by `openmono_contracts` (e.g. a target the net guard refused)."""
