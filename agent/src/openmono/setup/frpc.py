"""The frpc configuration: the tunnel that carries the gateway port, and only it, to a relay.

One tcp proxy named `openmono-gateway` forwards the relay's `remotePort` to the gateway's HTTPS
listener (inside compose: `caddy:8443`; the native stack: `127.0.0.1:GATEWAY_TLS_PORT`), so the
relay only ever carries the gateway's own TLS, end to end with the agent. TLS to frps is on too.
The token is not written into the file by default: the file says `{{ .Envs.FRP_AUTH_TOKEN }}`
(frp renders templates from the environment) and the token itself goes into `compose/.env`, mode
0600. The generated file is `frpc/frpc.toml` of the checkout (ignored by git, like
`compose/.env`; `frpc/frpc.example.toml` is the tracked example), or `OPENMONO_FRPC_CONFIG`.

No frp binary can be had on the build machine: the output is validated by parsing (`check`).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmono_contracts.facts import FRP_TOKEN_ENV

from openmono.config import current_environ
from openmono.setup._errors import SetupError
from openmono.setup._toml import dumps
from openmono.stack import write_private

PROXY_NAME = "openmono-gateway"
TOKEN_ENV = FRP_TOKEN_ENV
TOKEN_TEMPLATE = "{{ .Envs." + TOKEN_ENV + " }}"
# Inside the compose project frpc reaches the gateway by service name on its HTTPS container port.
COMPOSE_TARGET = ("caddy", 8443)
CONFIG_ENV = "OPENMONO_FRPC_CONFIG"
HEADER = (
    "# frpc configuration written by `openmono tunnel config` (see frpc/README.md).\n"
    "# One tcp proxy: the relay's remotePort -> the OpenMono gateway's HTTPS port. Nothing else\n"
    "# is exposed, and the relay only sees TLS.\n"
    f"# The token comes from the environment ({TOKEN_ENV}, kept in compose/.env).\n\n"
)


@dataclass(frozen=True)
class TunnelSpec:
    """What `openmono tunnel config` asks for."""

    server_addr: str
    server_port: int
    remote_port: int
    local_ip: str
    local_port: int
    token: str | None = None  # None: the file reads the token from the environment


def config_path(root: Path | None) -> Path | None:
    """The generated frpc config: `OPENMONO_FRPC_CONFIG`, else `<root>/frpc/frpc.toml`."""
    named = current_environ().get(CONFIG_ENV)
    if named:
        return Path(named).expanduser()
    return root / "frpc" / "frpc.toml" if root is not None else None


def _port(value: int, what: str) -> int:
    if not 1 <= value <= 65535:
        raise SetupError(f"{what} must be a port number (1-65535), not {value}")
    return value


def build(spec: TunnelSpec) -> dict[str, Any]:
    """The frpc document for `spec` (frp >= 0.52 TOML keys)."""
    if not spec.server_addr.strip():
        raise SetupError("--server-addr is empty")
    return {
        "serverAddr": spec.server_addr.strip(),
        "serverPort": _port(spec.server_port, "--server-port"),
        "loginFailExit": False,
        "auth": {"method": "token", "token": spec.token or TOKEN_TEMPLATE},
        "transport": {"tls": {"enable": True}},
        "proxies": [
            {
                "name": PROXY_NAME,
                "type": "tcp",
                "localIP": spec.local_ip,
                "localPort": _port(spec.local_port, "the gateway port"),
                "remotePort": _port(spec.remote_port, "--remote-port"),
            }
        ],
    }


def render(doc: dict[str, Any]) -> str:
    return HEADER + dumps(doc)


def load(path: Path) -> dict[str, Any]:
    """A frpc TOML file as a dict (raises `SetupError` when it does not parse)."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SetupError(f"{path}: not a readable frpc TOML file: {exc}") from exc


def gateway_proxy(doc: dict[str, Any]) -> dict[str, Any]:
    """The proxy that carries the gateway: ours by name, else the only tcp proxy."""
    proxies = doc.get("proxies")
    if not isinstance(proxies, list):
        raise SetupError("the frpc config has no [[proxies]]")
    tcp = [p for p in proxies if isinstance(p, dict) and p.get("type") == "tcp"]
    named = [p for p in tcp if p.get("name") == PROXY_NAME]
    if named:
        return named[0]
    if len(tcp) == 1:
        return tcp[0]
    raise SetupError(f"the frpc config has no tcp proxy named {PROXY_NAME!r}")


def check(doc: dict[str, Any]) -> list[str]:
    """Problems that would stop this config from tunnelling the gateway safely (empty = fine)."""
    problems: list[str] = []
    for key in ("serverAddr", "serverPort"):
        if key not in doc:
            problems.append(f"missing {key}")
    auth = doc.get("auth")
    if not isinstance(auth, dict) or not auth.get("token"):
        problems.append("missing auth.token")
    tls = doc.get("transport", {}).get("tls", {}) if isinstance(doc.get("transport"), dict) else {}
    if tls.get("enable") is not True:
        problems.append("transport.tls.enable is not true")
    proxies = doc.get("proxies")
    if not isinstance(proxies, list) or len(proxies) != 1:
        problems.append("exactly one proxy (the gateway) must be configured")
    try:
        proxy = gateway_proxy(doc)
    except SetupError as exc:
        problems.append(str(exc))
    else:
        for key in ("localIP", "localPort", "remotePort"):
            if key not in proxy:
                problems.append(f"proxy {proxy.get('name')!r}: missing {key}")
    return problems


def write(path: Path, doc: dict[str, Any]) -> bool:
    """Write `doc` to `path` (mode 0600) if it differs from what is there; True if written."""
    text = render(doc)
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    write_private(path, text)
    return True


def retarget(doc: dict[str, Any], local_ip: str, local_port: int) -> tuple[dict[str, Any], bool]:
    """`doc` with the gateway proxy pointed at `local_ip:local_port`; True if that changed it."""
    proxy = gateway_proxy(doc)
    changed = proxy.get("localIP") != local_ip or proxy.get("localPort") != local_port
    proxy["localIP"] = local_ip
    proxy["localPort"] = local_port
    return doc, changed
