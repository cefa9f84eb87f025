"""openmono_contracts.trust: the anchor's forms, plain-http refusal, the TLS failure sentence."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
from openmono_contracts import trust


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:47480",
        "http://127.1.2.3:9/v1",
        "http://localhost:8080",
        "http://[::1]:8080",
        # a compose service on the project's own network (docs/architecture.md §3: plain HTTP
        # inside one box)
        "http://caddy:8080",
        "http://llama-server:8080/v1",
        "https://relay.example.com:7000",
        "https://203.0.113.5:7000",
    ],
)
def test_loopback_http_and_any_https_pass(url: str) -> None:
    trust.check_plain_http(url, insecure_http=False)


@pytest.mark.parametrize(
    "url",
    [
        "http://relay.example.com:7000",
        "http://203.0.113.5:7000",
        "http://[2001:db8::1]:80",
        "http://localhost.evil.example:80",
        "http://127.0.0.1.nip.example:80",
        "http://caddy.example:8080",
        "http://10.1.2.3:8080",
    ],
)
def test_plain_http_beyond_loopback_needs_the_flag(url: str) -> None:
    with pytest.raises(trust.TrustError, match="--insecure-http"):
        trust.check_plain_http(url, insecure_http=False)
    trust.check_plain_http(url, insecure_http=True)


def test_no_anchor_is_none() -> None:
    assert trust.load_anchor(None) is None
    assert trust.load_anchor("  ") is None


def test_bad_anchors_say_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(trust.TrustError, match="neither a PEM certificate nor a readable file"):
        trust.load_anchor(str(tmp_path / "missing.pem"))
    (tmp_path / "junk.pem").write_text("not a certificate")
    with pytest.raises(trust.TrustError, match="holds no PEM certificate"):
        trust.load_anchor(str(tmp_path / "junk.pem"))
    broken = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
    with pytest.raises(trust.TrustError, match="setup join"):
        trust.load_anchor(broken)


def test_only_certificate_failures_are_explained() -> None:
    assert trust.explain_tls_failure(ConnectionRefusedError(), "https://x", None) is None
    failure = ssl.SSLCertVerificationError("certificate verify failed")
    wrapped = OSError("connect failed")
    wrapped.__cause__ = failure
    anchored = trust.explain_tls_failure(wrapped, "https://x:1", "pem")
    assert anchored is not None and "does not vouch for" in anchored
    system = trust.explain_tls_failure(wrapped, "https://x:1", None)
    assert system is not None and "set OPENMONO_GATEWAY_CA" in system


def test_the_agent_settings_carry_the_switch_and_the_anchor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OPENMONO_INSECURE_HTTP / OPENMONO_GATEWAY_CA reach the client; nothing is dialled here."""
    from openmono.agent import open_model
    from openmono.config import load_settings
    from openmono.llm import TrustError

    monkeypatch.setenv("OPENMONO_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("OPENMONO_LLM_ENDPOINT", "http://203.0.113.7:8080")
    monkeypatch.delenv("OPENMONO_INSECURE_HTTP", raising=False)
    monkeypatch.delenv("OPENMONO_GATEWAY_CA", raising=False)
    with pytest.raises(TrustError, match="refusing plain http://"):
        open_model(load_settings(tmp_path))
    monkeypatch.setenv("OPENMONO_INSECURE_HTTP", "1")
    assert load_settings(tmp_path).insecure_http is True
    open_model(load_settings(tmp_path))  # allowed now (the client connects lazily)
    monkeypatch.setenv("OPENMONO_GATEWAY_CA", str(tmp_path / "missing.pem"))
    with pytest.raises(TrustError, match="OPENMONO_GATEWAY_CA is neither"):
        open_model(load_settings(tmp_path))
