"""Finding 11: the data dir was 0755, its files 0644, and scrape.log kept URLs with their query.

A local user could read another user's sessions (tool outputs, prompts), artifacts and the stack's
logs, and pick tokens out of logged URLs (`?token=`, signed URLs, `user:pw@`). On real files with
the product's own writers: a session, an artifact and a stack log come out 0600 in 0700 folders
(what a stack service writes on its own too), a data dir an older version left open is tightened
before use and `openmono doctor` names what is open; a real scrape service started by the stack's
own spawn logs a fetched URL as scheme://host/path only. The worker's side (a WebFetch with
`?token=` through a real Celery worker, whose log shows httpx's request line without it) is in
tests/integration/test_worker_executor.py, on that module's worker.
"""

from __future__ import annotations

import logging
import stat
import sys
from pathlib import Path

import httpx
import pytest
from openmono.sessions import SessionHeader, SessionMessage, SessionStore
from openmono.stack.keeper import read_state
from openmono.stack.process import read_pidfile, spawn, stop_group
from openmono_contracts.logurl import redact_handlers
from openmono_worker.artifacts import spill
from openmono_worker.settings import WorkerSettings

from tests.support.procs import free_port, wait_until

SECRET = "s3cr3t-T0KEN"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def assert_private(data_dir: Path) -> None:
    """Every folder under `data_dir` 0700 and every file 0600 (itself included)."""
    paths = [data_dir, *data_dir.rglob("*")]
    wrong = {
        str(p): oct(mode(p))
        for p in paths
        if not p.is_symlink() and mode(p) != (0o700 if p.is_dir() else 0o600)
    }
    assert not wrong, wrong


def test_a_session_and_its_index_are_the_owners_alone(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = SessionStore(data)
    with store.create(SessionHeader(working_directory="/w", model="m")) as writer:
        writer.append(SessionMessage(role="tool", content="AWS_SECRET=x", tool_call_id="c"))
    store.set_title(writer.header.session_id, "a title")
    assert (data / "sessions" / "index.jsonl").is_file()
    assert_private(data)


def test_an_artifact_is_the_owners_alone(tmp_path: Path) -> None:
    data = tmp_path / "data"
    spilled = spill("line\n" * 10_000, WorkerSettings(data_dir=data), "sess", "call")
    assert spilled is not None and spilled.artifact is not None
    assert Path(spilled.artifact).is_file()
    assert_private(data)


def test_a_stack_log_pid_file_and_what_the_service_writes_are_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    stack = data / "stack"
    # the service writes a file of its own into the stack dir (as Redis, Caddy, npm do)
    script = f"open({str(stack / 'own.db')!r}, 'w').write('x'); print('up', flush=True)"
    record = spawn(
        [sys.executable, "-c", script],
        stack / "logs" / "svc.log",
        {"PATH": "/usr/bin:/bin"},
        tmp_path,
        stack / "pids" / "svc.json",
    )
    wait_until(lambda: "up" in (stack / "logs" / "svc.log").read_text(), 10, "the service's line")
    stop_group(record, grace_s=2)
    assert read_pidfile(stack / "pids" / "svc.json") == record
    assert_private(data)


def test_an_older_open_data_dir_is_reported_then_tightened(tmp_path: Path) -> None:
    from openmono.cli.commands.doctor import _private_check

    data = tmp_path / "data"
    (data / "sessions").mkdir(parents=True)
    old = data / "sessions" / "index.jsonl"
    old.write_text("{}\n")
    data.chmod(0o755)
    (data / "sessions").chmod(0o755)
    old.chmod(0o644)
    check = _private_check(data)
    assert check.status == "fail" and "3 path(s)" in check.detail and str(old) in check.detail
    SessionStore(data)  # any surface opening its sessions
    assert_private(data)
    assert _private_check(data).status == "pass"


def test_a_logged_url_keeps_no_query_fragment_or_userinfo(tmp_path: Path) -> None:
    log_file = tmp_path / "svc.log"
    logger = logging.getLogger("tests.security.datadir")
    handler = logging.FileHandler(log_file)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger.addHandler(handler)
    logger.propagate = False
    try:
        redact_handlers(logger)
        logger.warning("fetched %s", f"https://bob:pw@example.test:8443/a/b?token={SECRET}#frag")
        try:
            raise ValueError(f"bad page http://example.test/x?sig={SECRET}")
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
        handler.close()
    text = log_file.read_text()
    assert "WARNING fetched https://example.test:8443/a/b\n" in text
    assert "bad page http://example.test/x" in text and "Traceback" in text
    for leak in (SECRET, "bob", "pw@", "#frag", "token="):
        assert leak not in text


@pytest.mark.integration
def test_the_native_scrape_service_logs_fetched_urls_without_their_query(
    tmp_path: Path, web: str
) -> None:
    data = tmp_path / "data"
    stack = data / "stack"
    log, pidfile = stack / "logs" / "scrape.log", stack / "pids" / "scrape.json"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [
        *(sys.executable, "-m", "openmono.stack.keeper", "--name", "scrape"),
        *("--state", str(stack / "pids" / "scrape.state.json"), "--limit", "1", "--backoff", "1"),
        *("--", sys.executable, "-m", "openmono_scrape", "--host", "127.0.0.1", "--port"),
        str(port),
    ]
    env = {
        "PATH": "/usr/bin:/bin",
        "SCRAPE_ALLOW_CIDRS": "127.0.0.0/8",
        "SCRAPE_SYSTEM_DNS": "false",
        "SCRAPE_BROWSER_PATH": "",
    }
    record = spawn(command, log, env, tmp_path, pidfile)
    try:
        wait_until(lambda: _healthy(url), 60, f"the scrape service on {url}")
        page = f"{web}/article?token={SECRET}&X-Amz-Signature={SECRET}#{SECRET}"
        answer = httpx.post(f"{url}/scrape", json={"url": page}, timeout=60)
        assert answer.status_code == 200, answer.text
        wait_until(lambda: "scraped " in log.read_text(), 10, "the scrape line in its log")
    finally:
        stop_group(record, grace_s=5)
    text = log.read_text()
    assert SECRET not in text and "token=" not in text
    assert f"scraped {web}/article status=200" in text
    assert read_state(stack / "pids" / "scrape.state.json") is not None
    assert_private(data)


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False
