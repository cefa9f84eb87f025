"""The worker's index caches on disk: one pickle per workspace in the data dir, written whole.

The Python index and the code graph keep their state here so a new process (a new session, a
replaced pool process) starts from it. A copy is written only by the worker into its own data
dir, tagged with a schema (a hash of the code that produced it: changed code never reads an old
copy), and replaced atomically (temp file, rename); anything unreadable or foreign is ignored,
which costs only a rebuild.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

from openmono_contracts.privatefs import private_dir

log = logging.getLogger(__name__)


def cache_path(cache_dir: Path, workspace: Path) -> Path:
    tag = hashlib.blake2b(os.fsencode(workspace), digest_size=8).hexdigest()
    return cache_dir / f"{tag}.pickle"


def load_state(path: Path, schema: str) -> Any | None:
    """The state stored at `path` under `schema`, or None (missing, torn, foreign, older)."""
    try:
        with path.open("rb") as fh:
            stored = pickle.load(fh)  # noqa: S301 - our own file in our data dir (see above)
    except FileNotFoundError:
        return None
    except Exception as exc:  # a torn or foreign file: start from scratch
        log.info("ignoring the index cache %s: %s", path, exc)
        return None
    if isinstance(stored, dict) and stored.get("schema") == schema:
        return stored.get("state")
    return None


def store_state(path: Path, schema: str, state: Any) -> None:
    """Write `state` to `path` atomically; a failure only costs the next cold start."""
    data = pickle.dumps({"schema": schema, "state": state}, pickle.HIGHEST_PROTOCOL)
    with contextlib.suppress(OSError):
        private_dir(path.parent)  # mkstemp makes the file 0600; the folder is 0700 (privatefs)
        fd, tmp = tempfile.mkstemp(prefix=".index.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            Path(tmp).replace(path)
        finally:
            with contextlib.suppress(OSError):
                Path(tmp).unlink()
