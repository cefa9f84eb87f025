"""Which tool worker may run a call: the route both sides compute (docs/architecture.md §7,
docs/worker.md).

A call must only reach a worker that sees the caller's files. Two identities say "the same files":

    workspace   a random id stored in the workspace itself, `<root>/.openmono/workspace-id`.
                A worker started with `WORKER_WORKSPACES=<root>,...` creates it when missing
                (atomically: the first creator wins, everyone else reads its id) and consumes
                one queue per root, `openmono.tools.ws.<id>`. The agent finds the id in its
                workspace or the nearest folder above it that has one. Every worker that mounts
                the same folder (compose `--scale worker=N`, a box sharing it over NFS) reads
                the same id and shares the calls; another checkout has another id and never
                gets them.
    box         for a workspace without an id: the kernel's boot id and this process's mount
                namespace, hashed (`openmono.tools.box.<id>`). Processes with the same box id see
                the very same filesystem tree, so a worker started without `WORKER_WORKSPACES`
                (the native stack) serves every workspace of the agents beside it and of no other
                box, and needs no configuration. A container has a mount namespace of its own,
                so it never shares a box id with the host or another container.

The route travels in the `ToolRequest`; the worker refuses a call whose route is not its own (see
`openmono_worker.routing`), so a message forged or sent to the wrong queue is an error, not a run.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import socket
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from openmono_contracts.errors import ContractError

__all__ = [
    "QUEUE_PREFIX",
    "WORKSPACE_ID_FILE",
    "Route",
    "WorkspaceIdError",
    "box_id",
    "ensure_workspace_id",
    "find_workspace_id",
    "read_workspace_id",
    "route_for",
]

QUEUE_PREFIX = "openmono.tools"
WORKSPACE_ID_FILE = Path(".openmono") / "workspace-id"
_ID_FILE = os.fspath(WORKSPACE_ID_FILE)
_ID_RE = re.compile(r"^[0-9a-f]{16,64}$")
ID_PATTERN = _ID_RE.pattern


class WorkspaceIdError(ContractError):
    """A workspace id file that cannot be read, or created where one is needed."""


class Route(BaseModel):
    """Where a call goes: the queue of one workspace, or of one box's filesystem."""

    kind: Literal["workspace", "box"]
    id: str = Field(pattern=ID_PATTERN)

    @property
    def queue(self) -> str:
        return f"{QUEUE_PREFIX}.{'ws' if self.kind == 'workspace' else 'box'}.{self.id}"

    def describe(self) -> str:
        return f"workspace id {self.id}" if self.kind == "workspace" else f"box {self.id}"


def read_workspace_id(root: Path) -> str | None:
    """The id stored in `root`, or None when it has none; a malformed file is an error."""
    return _read_id(os.fspath(root))


def _read_id(root: str) -> str | None:
    # Plain os calls on strings: this runs for every call the agent sends (pathlib is ~3x slower).
    path = os.path.join(root, _ID_FILE)  # noqa: PTH118
    try:
        with open(path, "rb") as fh:  # noqa: PTH123
            raw = fh.read(256)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise WorkspaceIdError(f"cannot read {path}: {exc}") from exc
    text = raw.decode("ascii", "replace").strip()
    if not _ID_RE.match(text):
        raise WorkspaceIdError(f"{path} does not hold a workspace id (16-64 hex digits)")
    return text


def ensure_workspace_id(root: Path) -> str:
    """The id of `root`, created when missing. Atomic: of racing creators the first link wins."""
    found = read_workspace_id(root)
    if found is not None:
        return found
    path = root / WORKSPACE_ID_FILE
    new_id = secrets.token_hex(16)
    try:
        path.parent.mkdir(exist_ok=True)
        tmp = path.parent / f".workspace-id.{new_id}.tmp"
        tmp.write_text(new_id + "\n", encoding="ascii")
        try:
            # link() fails when the name exists: unlike rename, a second creator never replaces
            # an id that a worker may already be consuming under.
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
    except OSError as exc:
        raise WorkspaceIdError(f"cannot create {path}: {exc}") from exc
    winner = read_workspace_id(root)
    if winner is None:
        raise WorkspaceIdError(f"{path} vanished right after it was created")
    return winner


def find_workspace_id(workspace: Path) -> tuple[Path, str] | None:
    """The nearest folder at or above `workspace` that holds an id, and that id."""
    folder = os.fspath(workspace)
    while True:
        found = _read_id(folder)
        if found is not None:
            return Path(folder), found
        parent = os.path.dirname(folder)  # noqa: PTH120
        if parent == folder:
            return None
        folder = parent


@cache
def box_id() -> str:
    """This process's view of the files: boot id + mount namespace (else the hostname)."""
    parts: list[str] = []
    with contextlib.suppress(OSError):
        parts.append(Path("/proc/sys/kernel/random/boot_id").read_text().strip())
    with contextlib.suppress(OSError):
        parts.append(str(Path("/proc/self/ns/mnt").readlink()))
    if len(parts) < 2:
        parts = ["no-proc", socket.gethostname()]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def route_for(workspace: str | os.PathLike[str]) -> Route:
    """The route of a call on `workspace` as seen from this process (see the module docstring)."""
    # Resolved like the worker resolves it, so both sides look at the same folders.
    found = find_workspace_id(Path(os.path.realpath(workspace)))
    if found is not None:
        return Route(kind="workspace", id=found[1])
    return Route(kind="box", id=box_id())
