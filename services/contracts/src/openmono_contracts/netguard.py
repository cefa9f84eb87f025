"""SSRF guard shared by the scrape service and the agent's WebFetch fallback.

A URL is checked in four steps, and a fetch then connects to the address that was checked:

1. Scheme: only `http` and `https`.
2. Host spelling: `localhost` (with or without the trailing dot, and `*.localhost`) is refused by
   name; an IPv4 address written any way but canonical dotted-quad (`2130706433`, `0x7f.1`,
   `0177.0.0.1`, `127.1`) is refused outright, because curl and browsers read those as addresses
   while naive checks read them as names; an IPv6 literal is parsed as an address.
3. Resolution, once: every address the name resolves to must pass, not just the first, so a name
   that mixes a public and a private address cannot win a race on which one the client picks.
4. Address policy: an address inside an allow-listed CIDR passes (tests use 127.0.0.0/8, private
   deployments their LAN); otherwise it must be globally routable and outside every range in
   `_REFUSED` (loopback, private, link-local with the 169.254.169.254 metadata address, CGNAT,
   `0.0.0.0/8`, multicast, reserved, and the IPv6 forms that embed an IPv4 address:
   `::ffff:0:0/96`, 6to4 `2002::/16`, NAT64 `64:ff9b::/96`, Teredo `2001::/32`).

The result, `CheckedTarget`, carries the address to pin the connection to (no second DNS lookup).
Errors never say what DNS returned: the message names the rule, never an address.

    ContractError
     └── NetGuardError           -- base of the guard's refusals
          ├── BlockedTargetError -- scheme, name or address not allowed
          └── UnresolvableHostError -- the name did not resolve (or not in time)
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit, urlunsplit

from openmono_contracts.errors import ContractError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[list[str]]]

_REFUSED: tuple[IPNetwork, ...] = tuple(
    ipaddress.ip_network(n)
    for n in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.88.99.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
        "::/128",
        "::1/128",
        "::/96",
        "::ffff:0:0/96",
        "64:ff9b::/96",
        "64:ff9b:1::/48",
        "100::/64",
        "2001::/32",
        "2001:db8::/32",
        "2002::/16",
        "fc00::/7",
        "fe80::/10",
        "fec0::/10",
        "ff00::/8",
    )
)
_METADATA = ipaddress.ip_address("169.254.169.254")
# One label of a legacy inet_aton spelling: decimal, 0x-hex or 0-octal.
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$", re.IGNORECASE)
_DEFAULT_PORTS = {"http": 80, "https": 443}


class NetGuardError(ContractError):
    """A URL the guard refuses; `reason` is safe to show (it never contains a resolved address)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class BlockedTargetError(NetGuardError):
    """The scheme, the host name or one of its addresses is not allowed."""


class UnresolvableHostError(NetGuardError):
    """The host name did not resolve to any address (or not within the time allowed)."""


@dataclass(frozen=True)
class CheckedTarget:
    """A URL that passed the guard, with the address the connection must be pinned to."""

    url: str
    scheme: str
    host: str  # lower case, IDNA-encoded, no trailing dot, no brackets
    port: int
    address: str  # the checked address to connect to (no brackets)
    is_ip_literal: bool

    @property
    def curl_resolve(self) -> str:
        """A CURLOPT_RESOLVE entry (`host:port:address`) pinning the host to the checked address."""
        addr = f"[{self.address}]" if ":" in self.address else self.address
        return f"{self.host}:{self.port}:{addr}"

    def pinned_url(self) -> str:
        """The URL with its host replaced by the checked address (for clients without a resolve
        option, such as httpx: send `Host` = `host_header`, and TLS SNI = `host`)."""
        parts = urlsplit(self.url.strip())
        addr = f"[{self.address}]" if ":" in self.address else self.address
        default = _DEFAULT_PORTS[self.scheme]
        netloc = addr if self.port == default else f"{addr}:{self.port}"
        return urlunsplit((self.scheme, netloc, parts.path or "/", parts.query, ""))

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == _DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"


async def system_resolver(host: str, port: int) -> list[str]:
    """Every address the operating system's resolver gives for `host`."""
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    return [str(info[4][0]) for info in infos]


def policy_resolver(static_hosts: Mapping[str, str], system_dns: bool) -> Resolver:
    """A resolver that answers `static_hosts` (name -> address) without DNS, and asks the system
    for other names only when `system_dns` (air-gapped deployments and tests turn it off)."""
    static = {name.lower().rstrip("."): addr for name, addr in static_hosts.items()}

    async def resolve(host: str, port: int) -> list[str]:
        found = static.get(host)
        if found is not None:
            return [found]
        if not system_dns:
            raise OSError("name not in the static hosts and system DNS is off")
        return await system_resolver(host, port)

    return resolve


def _parse_networks(cidrs: Iterable[str]) -> tuple[IPNetwork, ...]:
    out: list[IPNetwork] = []
    for raw in cidrs:
        text = raw.strip()
        if text:
            out.append(ipaddress.ip_network(text, strict=False))
    return tuple(out)


def _legacy_ipv4(host: str) -> bool:
    """True when `host` is an IPv4 address in an inet_aton spelling (1 to 4 numeric labels)."""
    labels = host.split(".")
    return 1 <= len(labels) <= 4 and all(_NUMERIC_LABEL.match(lbl) for lbl in labels)


def _canonical_ipv4(host: str) -> bool:
    try:
        return str(ipaddress.IPv4Address(host)) == host
    except ValueError:
        return False


class NetGuard:
    """Checks URLs against the SSRF policy; one per service, safe to share between tasks."""

    def __init__(
        self,
        allow_cidrs: Iterable[str] = (),
        resolver: Resolver | None = None,
        resolve_timeout_s: float = 5.0,
    ) -> None:
        self.allowed = _parse_networks(allow_cidrs)
        self._resolver = resolver or system_resolver
        self._resolve_timeout_s = resolve_timeout_s

    def address_allowed(self, addr: IPAddress) -> bool:
        """The address policy alone (step 4 of the module docstring)."""
        if any(addr.version == net.version and addr in net for net in self.allowed):
            return True
        if addr == _METADATA or not addr.is_global:
            return False
        if addr.is_multicast or addr.is_reserved or addr.is_unspecified:
            return False
        return not any(addr.version == net.version and addr in net for net in _REFUSED)

    def _split(self, url: str) -> tuple[SplitResult, str, int]:
        try:
            parts = urlsplit(url.strip())
            port = parts.port
        except ValueError as exc:
            raise BlockedTargetError("the URL cannot be parsed") from exc
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORTS:
            raise BlockedTargetError("only http and https URLs are allowed")
        host = (parts.hostname or "").rstrip(".").lower()
        if not host:
            raise BlockedTargetError("the URL has no host")
        return parts, host, port or _DEFAULT_PORTS[scheme]

    def _literal(self, host: str) -> IPAddress | None:
        """The address a literal host stands for, None for a name; refuses odd IPv4 spellings."""
        if ":" in host:
            try:
                return ipaddress.IPv6Address(host.split("%", 1)[0])
            except ValueError as exc:
                raise BlockedTargetError("the host is not a valid address") from exc
        if _legacy_ipv4(host):
            if not _canonical_ipv4(host):
                raise BlockedTargetError("IPv4 addresses must be written as four decimal numbers")
            return ipaddress.IPv4Address(host)
        return None

    @staticmethod
    def _name(host: str) -> str:
        if host == "localhost" or host.endswith(".localhost"):
            raise BlockedTargetError("the host name is not allowed")
        try:
            return host.encode("idna").decode("ascii")
        except UnicodeError as exc:
            raise BlockedTargetError("the host name is not valid") from exc

    async def check(self, url: str) -> CheckedTarget:
        """Check `url`; return where to connect, or raise a `NetGuardError`."""
        parts, host, port = self._split(url)
        literal = self._literal(host)
        if literal is not None:
            if not self.address_allowed(literal):
                raise BlockedTargetError("the target address is not public")
            return CheckedTarget(url, parts.scheme.lower(), str(literal), port, str(literal), True)
        name = self._name(host)
        try:
            raw = await asyncio.wait_for(self._resolver(name, port), self._resolve_timeout_s)
        except (OSError, TimeoutError, UnicodeError) as exc:
            raise UnresolvableHostError("the host name could not be resolved") from exc
        addresses: list[IPAddress] = []
        for text in raw:
            try:
                addresses.append(ipaddress.ip_address(text.split("%", 1)[0]))
            except ValueError:
                continue
        if not addresses:
            raise UnresolvableHostError("the host name could not be resolved")
        if not all(self.address_allowed(a) for a in addresses):
            raise BlockedTargetError("the host name resolves to an address that is not public")
        # Prefer IPv4 for the pin: it is what most hosts serve reliably.
        chosen = next((a for a in addresses if a.version == 4), addresses[0])
        return CheckedTarget(url, parts.scheme.lower(), name, port, str(chosen), False)
