"""The user's environment for their commands: OpenMono's own virtual environment taken out."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from openmono_contracts.userenv import user_environment

OURS = Path(sys.prefix)


def test_our_venv_goes_and_the_users_stays() -> None:
    env = {
        "VIRTUAL_ENV": str(OURS),
        "VIRTUAL_ENV_PROMPT": "openmono",
        "UV_RUN_RECURSION_DEPTH": "1",
        "PATH": os.pathsep.join([str(OURS / "bin"), "/home/u/.venv/bin", "/usr/bin"]),
        "PYTHONPATH": str(OURS / "lib"),
        "HOME": "/home/u",
    }
    out = user_environment(env)
    assert out == {"PATH": "/home/u/.venv/bin:/usr/bin", "HOME": "/home/u"}


def test_a_users_own_venv_is_kept() -> None:
    env = {"VIRTUAL_ENV": "/home/u/proj/.venv", "PATH": "/home/u/proj/.venv/bin:/usr/bin"}
    assert user_environment(env) == env


def test_outside_a_venv_nothing_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "prefix", sys.base_prefix)
    env = {"PATH": f"{sys.base_prefix}/bin:/usr/bin", "VIRTUAL_ENV": "/x"}
    assert user_environment(env) == env
