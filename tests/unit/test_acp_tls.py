"""`openmono serve`'s own certificate: when TLS applies, what it names, that it is made once."""

from __future__ import annotations

import ipaddress
import stat
from pathlib import Path

import pytest
from cryptography import x509
from openmono.acp import _tls


@pytest.mark.parametrize(
    ("host", "beyond"),
    [
        ("127.0.0.1", False),
        ("localhost", False),
        ("::1", False),
        ("127.0.0.5", False),
        ("0.0.0.0", True),
        ("::", True),
        ("192.0.2.10", True),
        ("box.example", True),
    ],
)
def test_beyond_loopback(host: str, beyond: bool) -> None:
    assert _tls.beyond_loopback(host) is beyond


def test_certificate_is_made_once_and_names_the_bound_address(tmp_path: Path) -> None:
    first = _tls.ensure_cert(tmp_path, "192.0.2.10")
    assert stat.S_IMODE(first.key.stat().st_mode) == 0o600
    cert = x509.load_pem_x509_certificate(first.cert.read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    ips = san.get_values_for_type(x509.IPAddress)
    assert ipaddress.ip_address("192.0.2.10") in ips
    assert ipaddress.ip_address("127.0.0.1") in ips
    assert "localhost" in san.get_values_for_type(x509.DNSName)
    assert _tls.ensure_cert(tmp_path, "192.0.2.10") == first  # reused: the pin stays
    assert _tls.ensure_cert(tmp_path, "0.0.0.0") == first
    moved = _tls.ensure_cert(tmp_path, "192.0.2.11")  # another address: a certificate naming it
    assert moved.sha256 != first.sha256
