"""Call one tool in-process through `run_tool`, against a workspace and a private data dir."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmono_contracts import ToolRequest, ToolResult
from openmono_worker import WorkerSettings, run_tool


@dataclass
class ToolBench:
    """A workspace plus settings; `call` runs a tool the way both executors do."""

    ws: Path
    settings: WorkerSettings
    calls: int = 0

    def call(self, tool: str, timeout_s: float = 60.0, **params: Any) -> ToolResult:
        self.calls += 1
        req = ToolRequest(
            tool=tool,
            params=params,
            call_id=f"call-{self.calls}",
            session_id="sess",
            workspace=str(self.ws),
            timeout_s=timeout_s,
        )
        return run_tool(req, settings=self.settings)

    def write(self, name: str, content: str | bytes) -> Path:
        path = self.ws / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        return path

    def read(self, name: str) -> str:
        return (self.ws / name).read_text()


def make_bench(tmp_path: Path, **settings: Any) -> ToolBench:
    ws = tmp_path / "ws"
    ws.mkdir(parents=True)
    return ToolBench(ws.resolve(), WorkerSettings(data_dir=tmp_path / "data", **settings))
