"""How a client trusts the gateway across a relay: the trust anchor, plain-http refusal, TLS errors.

The anchor is the gateway's CA certificate (Caddy's internal CA), handed to an agent box by
`openmono setup join` as `OPENMONO_GATEWAY_CA`: inline PEM, or the path of a PEM file. A client
with an anchor verifies the gateway's chain against that CA alone, never the system store and
never `verify=False`. The host name is not checked against it: the gateway cannot know the relay's
name or IP in advance (an IP carries no SNI), and the CA is private to one gateway (its key never
leaves that box), so the chain is the gateway's identity. Without an anchor the caller's usual
verifying context applies (a gateway with a public certificate, or loopback plain HTTP).

    ContractError
     └── TrustError  -- a bad anchor, or plain http:// to a host beyond loopback; says what to do

Used by every gateway client on both sides (agent LLM client, doctor, `/services` probes, the
worker's gateway search/scrape calls): the anchor travels to the worker inside `WebAccess`.
"""

from __future__ import annotations

import ipaddress
import ssl
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from openmono_contracts.errors import ContractError

__all__ = [
    "ANCHOR_ENV",
    "INSECURE_ENV",
    "TrustError",
    "anchored_context",
    "check_plain_http",
    "explain_tls_failure",
    "is_loopback_url",
    "is_same_box_url",
    "load_anchor",
]

ANCHOR_ENV = "OPENMONO_GATEWAY_CA"
INSECURE_ENV = "OPENMONO_INSECURE_HTTP"
_JOIN_HINT = "run `openmono setup join --relay-url URL` on the inference box and paste its lines"


class TrustError(ContractError):
    """The gateway cannot be trusted as configured; the message says what to do."""


def load_anchor(value: str | None) -> str | None:
    """The anchor as PEM text: `value` itself when it holds a certificate, else a file it names."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if "-----BEGIN CERTIFICATE-----" not in text:
        path = Path(text).expanduser()
        try:
            text = path.read_text(encoding="ascii", errors="replace").strip()
        except OSError as exc:
            raise TrustError(
                f"{ANCHOR_ENV} is neither a PEM certificate nor a readable file ({path}: "
                f"{exc.strerror}); {_JOIN_HINT}"
            ) from None
        if "-----BEGIN CERTIFICATE-----" not in text:
            raise TrustError(f"{ANCHOR_ENV} file {path} holds no PEM certificate; {_JOIN_HINT}")
    anchored_context(text)  # parse now: a damaged paste is reported here, not at first use
    return text + "\n"


@cache
def anchored_context(pem: str) -> ssl.SSLContext:
    """A client context that trusts `pem` only (see the module docstring for the host name)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_verify_locations(cadata=pem)
    except (ssl.SSLError, ValueError) as exc:
        raise TrustError(
            f"{ANCHOR_ENV} is not a valid PEM certificate ({exc}); {_JOIN_HINT}"
        ) from None
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


def is_loopback_url(url: str) -> bool:
    host = (urlsplit(url).hostname or "").strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_same_box_url(url: str) -> bool:
    """Loopback, or a host name without a dot: a compose service (`http://caddy:8080`) or an
    /etc/hosts name, resolved on this box's own network. A relay URL is never one of those."""
    if is_loopback_url(url):
        return True
    host = urlsplit(url).hostname or ""
    return bool(host) and "." not in host and ":" not in host


def check_plain_http(url: str, *, insecure_http: bool, what: str = "the gateway") -> None:
    """Refuse `http://` beyond this box: the bearer key and every prompt would cross in clear."""
    if urlsplit(url).scheme != "http" or insecure_http or is_same_box_url(url):
        return
    raise TrustError(
        f"refusing plain http:// to {what} at {url}: the key, the prompts and the files the agent "
        f"reads would cross the network in clear. Use the https:// relay URL that `openmono "
        f"setup join` prints (with its {ANCHOR_ENV}), or, on a network you trust, pass "
        f"--insecure-http ({INSECURE_ENV}=1)"
    )


def _verify_error(exc: BaseException | None) -> ssl.SSLCertVerificationError | None:
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, ssl.SSLCertVerificationError):
            return exc
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def explain_tls_failure(exc: BaseException, url: str, anchor: str | None) -> str | None:
    """A sentence saying what to do when `exc` is a failed certificate check, else None."""
    failure = _verify_error(exc)
    if failure is None:
        return None
    detail = getattr(failure, "verify_message", None) or str(failure)
    if anchor:
        return (
            f"the server at {url} presented a certificate that {ANCHOR_ENV} does not vouch for "
            f"({detail}): a man in the middle, the wrong relay port, or a gateway whose CA "
            f"changed. Connection refused; if the gateway was reinstalled, {_JOIN_HINT}"
        )
    return (
        f"the server at {url} presented a certificate the system does not trust ({detail}). "
        f"For an OpenMono gateway set {ANCHOR_ENV} (its CA): {_JOIN_HINT}"
    )
