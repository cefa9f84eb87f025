"""Natively, the gateway's own secret reaches the gateway and the key service only (finding 9)."""

from __future__ import annotations

from pathlib import Path

import pytest
from openmono.stack.runner import _child_env
from openmono.stack.services import SERVICES
from openmono.stack.settings import StackSettings
from openmono.stack.spec import Context


def test_only_the_gateway_and_the_key_service_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_SECRET", "exported-in-the-shell")  # not passed on as it is
    settings = StackSettings(
        _env_file=None,
        gateway_secret="the-generated-one",
        openmono_broker_url="redis://127.0.0.1:6379/0",
        openmono_data_dir=tmp_path,
    )
    ctx = Context(tmp_path, settings)
    holders = {
        spec.name: _child_env(ctx, spec).get("GATEWAY_SECRET")
        for spec in SERVICES
        if "GATEWAY_SECRET" in _child_env(ctx, spec)
    }
    assert holders == {"gateway": "the-generated-one", "keys": "the-generated-one"}
    assert len(SERVICES) > 2
