"""`openmono keys`: a key per agent box at the gateway, usage per key (openmono_keys does the
store; this picks the stack whose store it is and tells its gateway).

    backend = open_backend("auto", say)
    issued = backend.add("laptop-anna", expires_days=90, rate="60/min")
"""

from __future__ import annotations

from openmono.keys._backend import Backend, Compose, Native, Say, wait_for_generation
from openmono.keys._errors import KeysCommandError
from openmono.keys._open import open_backend

__all__ = [
    "Backend",
    "Compose",
    "KeysCommandError",
    "Native",
    "Say",
    "open_backend",
    "wait_for_generation",
]
