"""`openmono setup` and `openmono tunnel`: prepare an inference box and its tunnel to a relay.

`plan()` says what `openmono setup gateway|search|scraper` would change (the `.env`, an existing
frpc config, the agent's settings, which services start); `apply()` does it. `frpc` builds,
checks and retargets the frpc TOML that tunnels the gateway port, and nothing else, to a relay.
"""

from openmono.setup import frpc
from openmono.setup._bringup import BringUp, compose_base, compose_command, docker_answers
from openmono.setup._errors import SetupError
from openmono.setup._plan import Plan, Target, Via, apply, plan

__all__ = [
    "BringUp",
    "Plan",
    "SetupError",
    "Target",
    "Via",
    "apply",
    "compose_base",
    "compose_command",
    "docker_answers",
    "frpc",
    "plan",
]
