"""TLS for `openmono serve` when it listens beyond loopback: a self-signed certificate, made once.

Beyond loopback the bearer token and every prompt would otherwise cross the network in clear. The
certificate and its key live in `<data dir>/acp-tls/` (key mode 0600) and are reused on every
start, so a client pins them once: `run_server` logs the certificate's path and SHA-256 pin.
A client trusts that certificate file as its CA (it is self-signed: it is its own CA); the
certificate names `localhost`, 127.0.0.1, ::1, this host's name and the address bound, so host
name checks pass where those are used. A certificate older than its renewal margin is replaced.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from openmono_contracts.privatefs import open_private, private_dir

VALID_DAYS = 825  # the longest lifetime clients (Apple's TLS policy, for one) accept for a leaf
RENEW_DAYS = 30
_LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})


@dataclass(frozen=True)
class ServerCert:
    cert: Path
    key: Path
    sha256: str  # `AB:CD:…` of the DER certificate


def beyond_loopback(host: str) -> bool:
    """Whether binding `host` makes the server reachable from other machines."""
    if host in _LOOPBACK_NAMES:
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True  # a host name: it may resolve to anything


def _pin(der: bytes) -> str:
    digest = hashlib.sha256(der).hexdigest().upper()
    return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))


def _names(bind: str) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = [x509.DNSName("localhost")]
    ips = {"127.0.0.1", "::1"}
    hostname = socket.gethostname()
    dns = {hostname} if hostname else set()
    try:
        address = ipaddress.ip_address(bind)
    except ValueError:
        dns.add(bind)
    else:
        if not address.is_unspecified:
            ips.add(str(address))
    names += [x509.DNSName(n) for n in sorted(dns - {"localhost"})]
    names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in sorted(ips)]
    return names


def _still_good(path: Path, bind: str) -> bool:
    try:
        cert = x509.load_pem_x509_certificate(path.read_bytes())
    except (OSError, ValueError):
        return False
    margin = dt.datetime.now(dt.UTC) + dt.timedelta(days=RENEW_DAYS)
    if cert.not_valid_after_utc < margin:
        return False
    try:
        address = ipaddress.ip_address(bind)
    except ValueError:
        return True
    if address.is_unspecified:
        return True
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return address in san.get_values_for_type(x509.IPAddress)


def ensure_cert(data_dir: Path, bind: str) -> ServerCert:
    """The persisted certificate for `bind`, created (or renewed) when needed."""
    folder = data_dir / "acp-tls"
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    if not (key_path.is_file() and _still_good(cert_path, bind)):
        private_dir(folder)
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "openmono serve")])
        now = dt.datetime.now(dt.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=VALID_DAYS))
            .add_extension(x509.SubjectAlternativeName(_names(bind)), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .sign(key, hashes.SHA256())
        )
        pem_key = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(pem_key)
        with open_private(cert_path, "wb") as fh:
            fh.write(cert.public_bytes(serialization.Encoding.PEM))
    der = x509.load_pem_x509_certificate(cert_path.read_bytes()).public_bytes(
        serialization.Encoding.DER
    )
    return ServerCert(cert_path, key_path, _pin(der))
