"""Opt-in (`OPENMONO_TEST_NPM=1`: it downloads from the npm registry, ~20 s): `openmono lsp
install typescript` from the real registry, then the Lsp tool answers with that server in a
trusted workspace and refuses it in an untrusted one (the trust rule holds for installed servers).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from openmono.cli import main
from openmono_contracts import ToolRequest
from openmono_worker import WorkerSettings, run_tool, stop_language_servers

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(
        os.environ.get("OPENMONO_TEST_NPM") != "1", reason="set OPENMONO_TEST_NPM=1 (npm registry)"
    ),
]

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "codeintel" / "ts"


def test_an_installed_typescript_server_serves_the_lsp_tool(
    clean_env: Path, tmp_path: Path
) -> None:
    res = CliRunner().invoke(main, ["lsp", "install", "typescript", "--yes"])
    assert res.exit_code == 0, res.output
    listed = CliRunner().invoke(main, ["lsp", "list"]).output
    assert str(clean_env / "lsp" / "typescript") in listed
    ws = (tmp_path / "ws").resolve()
    shutil.copytree(FIXTURE, ws)
    settings = WorkerSettings(data_dir=clean_env)

    def refs(trusted: bool) -> tuple[bool, str]:
        req = ToolRequest(
            tool="Lsp",
            params={"action": "references", "file_path": "src/geometry.ts", "line": 8,
                    "character": 14},
            call_id="c1", session_id="s", workspace=str(ws), timeout_s=120,
            workspace_trusted=trusted,
        )  # fmt: skip
        out = run_tool(req, settings=settings)
        return out.ok, out.output if out.ok else out.error or ""

    try:
        ok, text = refs(trusted=False)
        assert not ok and "trusted" in text
        # tsserver answers with what it has loaded so far: the first answers after its start can
        # hold only the declaration (docs/code-intelligence.md, "Servers the user installs")
        deadline = time.monotonic() + 30
        ok, text = refs(trusted=True)
        while ok and "src/app.ts" not in text and time.monotonic() < deadline:
            time.sleep(1)
            ok, text = refs(trusted=True)
        assert ok and "src/app.ts" in text, text
    finally:
        stop_language_servers(ws)
