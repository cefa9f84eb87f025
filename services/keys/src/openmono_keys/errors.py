"""The one exception base of the key package, and what each refusal is.

    KeysError
     ├── NameInvalid      -- not `[a-z0-9-]{1,40}`, or the reserved `operator`
     ├── NameTaken        -- `add` of a name that has a key
     ├── NameUnknown      -- `revoke`/`rotate` of a name that has none
     ├── ValueInvalid     -- a bad `--expires` or `--rate`, a bad `--since`
     └── StoreUnreadable  -- keys.json exists but is not a key file (never overwritten then)

The first four are the caller's mistake: the CLI exits with code 2 on them.
"""

from __future__ import annotations


class KeysError(Exception):
    """Base of every error of `openmono_keys`; `str()` is a sentence for the operator."""


class UsageMistake(KeysError):
    """The command was given something it cannot do (exit code 2)."""


class NameInvalid(UsageMistake):
    pass


class NameTaken(UsageMistake):
    pass


class NameUnknown(UsageMistake):
    pass


class ValueInvalid(UsageMistake):
    pass


class StoreUnreadable(KeysError):
    pass
