"""The sandbox a shell call runs in: the policy on the wire, and what no sandboxed call may read.

`SandboxPolicy` is `ToolRequest.sandbox` (docs/architecture.md §7): set by the agent's permission
engine, enforced by the worker (`openmono_worker.sandbox`), which refuses a call it cannot confine.

    read_only        a command auto-allowed because it only reads: the system and the workspace
                     readable, nothing writable but a private temporary folder, no network
    workspace_write  an approved command under `permissions.sandbox`: the same, with the
                     workspace writable

`hidden_paths` is what neither policy shows (home is not even offered; these are carved out of
what is, such as a workspace that is the checkout or lies under home). The agent reads the same
list when no sandbox can run, to refuse operands that name these paths.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

SandboxPolicy = Literal["read_only", "workspace_write"]
SANDBOX_POLICIES: tuple[SandboxPolicy, ...] = ("read_only", "workspace_write")

# The checkout's one secret file (the gateway key, Redis password, ...), relative to a checkout or
# a workspace that is one.
ENV_FILE = Path("compose") / ".env"
# A checkout is recognised by its gateway config (as `openmono.config` recognises it).
CHECKOUT_MARKER = Path("caddy") / "Caddyfile"
# Secrets a home folder holds, carved out when a workspace contains home.
HOME_SECRETS = (".ssh", ".gnupg", ".aws", ".kube", ".docker", ".netrc", ".config/gcloud",
                ".git-credentials", ".pypirc", ".npmrc", ".cargo/credentials.toml",
                ".local/share/keyrings", ".password-store")  # fmt: skip
# System files the sandbox's read-only view of /etc leaves out (readable by root otherwise).
SYSTEM_SECRETS = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssh",
                  "/etc/ssl/private", "/etc/security/opasswd")  # fmt: skip
# services/contracts/src/openmono_contracts/sandbox.py -> the checkout, when installed from one
_PACKAGE_CHECKOUT = Path(__file__).resolve().parents[4]


def installed_checkout() -> Path | None:
    """The OpenMono checkout this package runs from (an editable install), else None."""
    return _PACKAGE_CHECKOUT if (_PACKAGE_CHECKOUT / CHECKOUT_MARKER).is_file() else None


def hidden_paths(
    workspace: Path,
    *,
    data_dir: Path,
    home: Path,
    env_file: Path | None = None,
    extra: Iterable[Path] = (),
) -> list[Path]:
    """Absolute, resolved paths no sandboxed command may read (see the module docstring)."""
    found = [data_dir, workspace / ENV_FILE, *(home / s for s in HOME_SECRETS), *extra]
    found += [Path(s) for s in SYSTEM_SECRETS]
    checkout = installed_checkout()
    if checkout is not None:
        found.append(checkout / ENV_FILE)
    if env_file is not None:
        found.append(env_file)
    out: list[Path] = []
    for path in found:
        resolved = path.expanduser().resolve()
        if resolved not in out:
            out.append(resolved)
    return out
