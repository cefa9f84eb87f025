"""The settings `up` applied are what `openmono status` shows the stack by (stack/applied.py)."""

from __future__ import annotations

import stat
from pathlib import Path

from openmono.stack.applied import applied_path, drift, forget_applied, read_applied, record_applied
from openmono.stack.settings import StackSettings


def _settings(tmp: Path, **values: object) -> StackSettings:
    return StackSettings(  # type: ignore[call-arg]
        _env_file=None, openmono_data_dir=tmp / "data", llama_api_key="k" * 32, **values
    )


def test_what_up_applied_reads_back_the_same_and_privately(tmp_path: Path) -> None:
    applied = _settings(tmp_path, gateway_port=18080, llama_replicas=3, llama_threads=1)
    applied.stack_dir.mkdir(parents=True)
    record_applied(applied)
    assert stat.S_IMODE(applied_path(applied).stat().st_mode) == 0o600
    back = read_applied(_settings(tmp_path))
    assert back is not None
    assert back.as_env() == applied.as_env()
    assert back.llama_api_key.get_secret_value() == "k" * 32
    forget_applied(applied)
    assert read_applied(applied) is None


def test_the_shells_other_settings_are_named_and_secrets_only_by_name(tmp_path: Path) -> None:
    running = _settings(tmp_path, gateway_port=18080)
    shell = _settings(tmp_path, gateway_port=8080, gateway_secret="s" * 32)
    changes = drift(shell, running)
    assert "GATEWAY_PORT='8080' here, '18080' running" in changes
    assert "GATEWAY_SECRET (a secret)" in changes
    assert not any("s" * 32 in c for c in changes)
    assert drift(running, running) == []


def test_a_record_this_version_cannot_read_is_none(tmp_path: Path) -> None:
    s = _settings(tmp_path)
    s.stack_dir.mkdir(parents=True)
    applied_path(s).write_text('{"gateway_port": "not a port"}')
    assert read_applied(s) is None
    applied_path(s).write_text("{broken")
    assert read_applied(s) is None
