"""OpenMono gateway keys: a key per agent box, usage per key, rate limits per key.

Caddy checks the keys itself (caddy/Caddyfile, "keys"), so this package only keeps the store and
writes the snippets the gateway imports (`store`, `caddy`), reads the gateway's access records
(`usage`), and serves the rate limits of keys that have one (`app`, `ratelimit`; `python -m
openmono_keys serve`). `openmono keys` drives the store natively; in compose it runs
`python -m openmono_keys` inside the `keys` container, whose volume holds the store.
"""

from openmono_keys.errors import (
    KeysError,
    NameInvalid,
    NameTaken,
    NameUnknown,
    StoreUnreadable,
    UsageMistake,
    ValueInvalid,
)
from openmono_keys.settings import KeysSettings
from openmono_keys.store import KeyStore

__all__ = [
    "KeyStore",
    "KeysError",
    "KeysSettings",
    "NameInvalid",
    "NameTaken",
    "NameUnknown",
    "StoreUnreadable",
    "UsageMistake",
    "ValueInvalid",
]
