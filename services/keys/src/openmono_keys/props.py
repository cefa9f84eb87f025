"""What a box key sees of llama-server's `GET /props`: everything but the filesystem's paths.

`/props` names the model file by its full path (`model_path`, and `model_alias`, which is the
path unless the server was given an alias): where the operator keeps models and under which
user, which a box has no use for. The agent needs the per-slot context size, the chat template
and its capabilities (`ModelInfo`), and a model name to show: the alias keeps its file name.
Any other single-line string that is an absolute path gets the same treatment, so a field a
newer llama-server adds does not leak one either. `GET /v1/models` gets the same filter: it names
the model by its path too (its `id`, and the Ollama-style `models[].name`/`model`). The operator's
key gets both as they are.

Caddy cannot rewrite a JSON body; the token tap, already the gateway's hop to the replicas, does
it for the one request where a box asks (caddy/Caddyfile, `@box_props`).
"""

from __future__ import annotations

import json
import re
from typing import Any

# dropped outright: the path itself
_PATH_FIELDS = frozenset({"model_path"})
# `/…`, `~/…`, `C:\…` or `C:/…`, on one line (a chat template is many lines and stays)
_ABSOLUTE = re.compile(r"(?:/|~/|[A-Za-z]:[\\/])[^\n\r]*")
# the responses this filter reads whole: a real one is ~10 KiB (the chat template)
MAX_PROPS_BYTES = 4 * 1024 * 1024


def public_props(body: bytes) -> bytes:
    """The body without paths; a body that is not a JSON object is refused (`ValueError`)."""
    doc = json.loads(body)
    if not isinstance(doc, dict):
        raise ValueError("/props is not a JSON object")
    return json.dumps(_scrub(doc), separators=(",", ":")).encode()


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items() if k not in _PATH_FIELDS}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, str) and _ABSOLUTE.fullmatch(value):
        return re.split(r"[\\/]", value.rstrip("\\/"))[-1]
    return value
