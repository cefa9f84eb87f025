"""Language-server lifecycle without a real server: programs that exit or never answer.

`false` stands for a server that crashes on start, `sleep` for one that never answers; both are
real processes, so the timeouts, the crash guard and the process-group kill are the real ones.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from openmono_worker import stop_language_servers
from openmono_worker.codeintel import (
    READS_ONLY,
    Language,
    LanguageServer,
    NoServer,
    ServerFailed,
    _languages,
    _server,
    codeintel_settings,
    server_for,
)

from tests.support.tool_calls import ToolBench, make_bench


def test_unknown_and_missing_servers_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(NoServer, match=r"no language server for notes\.txt"):
        server_for(tmp_path, tmp_path / "notes.txt", "notes.txt", trusted=True)
    missing = Language("madeup", (".mu",), ("openmono-no-such-server",))
    assert missing.executable() is None


def test_a_server_that_keeps_crashing_is_given_up_on(tmp_path: Path) -> None:
    server = LanguageServer(tmp_path, Language("crashy", (".c",), ("false",)), "/bin/false")
    for _ in range(4):  # each failed start is a crash the next start notices
        with pytest.raises(ServerFailed, match="did not initialize"):
            server.ensure_started()
    with pytest.raises(ServerFailed, match="crashed 4 times"):
        server.ensure_started()
    assert not server.alive()


def test_a_silent_server_times_out_and_its_group_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_server, "INIT_TIMEOUT_S", 0.5)
    server = LanguageServer(tmp_path, Language("silent", (".s",), ("sleep", "60")), "/bin/sleep")
    with pytest.raises(ServerFailed, match=r"did not initialize.*no answer .* in 0\.5 s"):
        server.ensure_started()
    pid = server.pid
    assert pid is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped


@pytest.fixture
def stuck_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ToolBench]:
    """`.py` files served by a "server" that never answers, and a 1 s edit budget."""
    silent = Language("python", (".py",), ("sleep", "30"), project_code=READS_ONLY)
    monkeypatch.setitem(_languages._BY_EXTENSION, ".py", silent)
    monkeypatch.setattr(_server, "INIT_TIMEOUT_S", 3.0)
    monkeypatch.setenv("WORKER_CODEINTEL_EDIT_WAIT_S", "1")
    codeintel_settings.cache_clear()
    bench = make_bench(tmp_path)
    yield bench
    stop_language_servers(bench.ws)
    codeintel_settings.cache_clear()


def test_an_edit_never_waits_on_a_stuck_server_beyond_its_budget(stuck_python: ToolBench) -> None:
    res = stuck_python.call("FileWrite", file_path="m.py", content="x = 1\n")
    assert res.ok, res.error
    assert res.output.startswith("Created m.py")
    assert "(no diagnostics for m.py: the language server did not answer within 1 s)" in res.output
    assert stuck_python.read("m.py") == "x = 1\n"
