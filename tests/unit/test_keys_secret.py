"""The gateway's own secret at the key service (openmono_keys.secret; finding 9, at the gateway:
tests/security/test_keys_service_auth.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from openmono_keys.__main__ import serve
from openmono_keys.secret import from_gateway
from openmono_keys.settings import KeysSettings


def test_only_the_secret_itself_matches() -> None:
    assert from_gateway("s3cret", "s3cret") and from_gateway(b"s3cret", "s3cret")
    for given in (None, "", "s3cre", "s3cret ", "S3CRET", "s3cret\x00"):
        assert not from_gateway(given, "s3cret"), given
    assert not from_gateway("", "") and not from_gateway(None, "")  # an empty one never matches


def test_the_service_will_not_serve_without_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GATEWAY_SECRET", raising=False)
    monkeypatch.delenv("KEYS_GATEWAY_SECRET", raising=False)
    with pytest.raises(SystemExit) as exited:
        serve(KeysSettings(dir=tmp_path / "keys", usage_dir=tmp_path / "usage"))
    assert exited.value.code == 78
    assert "GATEWAY_SECRET is empty" in capsys.readouterr().err
    assert not (tmp_path / "keys").exists()  # refused before anything was written
    monkeypatch.setenv("GATEWAY_SECRET", "from-the-env-file")
    assert KeysSettings().gateway_secret.get_secret_value() == "from-the-env-file"
