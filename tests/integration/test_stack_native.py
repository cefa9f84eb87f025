"""`openmono up | status | down` against real processes: Caddy, llama.cpp server, on free ports."""

from __future__ import annotations

import json
import os
import signal
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from openmono_contracts.privatefs import exposed

from tests.support.llama import LlamaServer
from tests.support.native_stack import native_stack_env, our_processes, run_openmono
from tests.support.procs import free_port, wait_until

pytestmark = pytest.mark.integration


@pytest.fixture
def stack_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    with native_stack_env(tmp_path) as env:
        yield env


def test_up_status_down_leaves_nothing_running(stack_env: dict[str, str], tmp_path: Path) -> None:
    up = run_openmono(["up"], stack_env)
    assert up.returncode == 0, up.stdout + up.stderr
    out = up.stdout
    generated = next(line for line in out.splitlines() if line.startswith("generated "))
    assert "LLAMA_API_KEY" in generated and "GATEWAY_SECRET" in generated
    assert "llama-server" in out and "gateway" in out and "healthy in" in out
    assert (
        '/services {"llm": true, "llm_replicas": null, "search": false, "scrape": false, '
        '"crawl_durable": false}' in out
    )

    env_file = Path(stack_env["OPENMONO_ENV_FILE"])
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    key = next(
        line.split("=", 1)[1]
        for line in env_file.read_text().splitlines()
        if line.startswith("LLAMA_API_KEY=")
    )
    gateway = f"http://127.0.0.1:{stack_env['GATEWAY_PORT']}"
    models = httpx.get(
        f"{gateway}/v1/models", headers={"Authorization": f"Bearer {key}"}, timeout=10
    )
    assert models.status_code == 200
    assert httpx.get(f"{gateway}/v1/models", timeout=10).status_code == 401
    # through a relay the Host header is the relay's name: the gateway must not care
    relayed = httpx.get(f"{gateway}/services", headers={"Host": "relay.example:9000"}, timeout=10)
    assert relayed.json() == {
        "llm": True,
        "llm_replicas": None,
        "search": False,
        "scrape": False,
        "crawl_durable": False,
    }

    status = run_openmono(["status", "--json"], stack_env, timeout=60)
    assert status.returncode == 0, status.stdout + status.stderr
    rows = {row["service"]: row for row in json.loads(status.stdout)}
    assert set(rows) == {"llama-server", "keys", "gateway"}
    assert all(row["healthy"] and row["pid"] for row in rows.values())
    assert rows["gateway"]["address"] == f"127.0.0.1:{stack_env['GATEWAY_PORT']}"

    # a shell with another gateway port sees the stack as it runs, and what `up` would change
    elsewhere = {**stack_env, "GATEWAY_PORT": str(free_port())}
    seen = run_openmono(["status", "--json"], elsewhere, timeout=60)
    assert seen.returncode == 0, seen.stdout + seen.stderr
    seen_rows = {row["service"]: row for row in json.loads(seen.stdout)}
    assert seen_rows["gateway"]["address"] == rows["gateway"]["address"]
    assert seen_rows["gateway"]["healthy"] and "/services read" in seen_rows["gateway"]["gateway"]
    assert f"GATEWAY_PORT='{elsewhere['GATEWAY_PORT']}' here" in seen.stderr

    restarted = run_openmono(["restart", "gateway"], stack_env)
    assert restarted.returncode == 0, restarted.stdout + restarted.stderr
    assert "stopped the gateway" in restarted.stdout
    assert "llama-server  already running" in restarted.stdout
    new_rows = {
        r["service"]: r for r in json.loads(run_openmono(["status", "--json"], stack_env).stdout)
    }
    assert new_rows["gateway"]["pid"] != rows["gateway"]["pid"]
    assert new_rows["gateway"]["healthy"]
    rows = new_rows
    assert run_openmono(["restart", "nonsense"], stack_env).returncode == 1

    again = run_openmono(["up"], stack_env)
    assert again.returncode == 0
    assert again.stdout.count("already running") == 3
    assert "generated" not in again.stdout  # the key is generated once

    assert our_processes(tmp_path / "data")
    down = run_openmono(["down"], stack_env, timeout=60)
    assert down.returncode == 0, down.stderr
    assert "stopped gateway" in down.stdout and "stopped llama-server" in down.stdout
    assert our_processes(tmp_path / "data") == []
    for row in rows.values():
        assert not Path(f"/proc/{row['pid']}").exists() or _zombie(row["pid"])

    after = run_openmono(["status"], stack_env, timeout=60)
    assert after.returncode == 0  # a stack that is down is an answer, not an error
    assert "not running" in after.stdout


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_port_taken_is_a_clear_error_and_nothing_is_left(
    stack_env: dict[str, str], tmp_path: Path, llama: LlamaServer
) -> None:
    # an external llama server: only the gateway would start, and its port is taken
    stack_env["LLAMA_UPSTREAM"] = llama.url
    stack_env["LLAMA_API_KEY"] = llama.api_key
    stack_env["GATEWAY_PORT"] = llama.url.rsplit(":", 1)[1]
    up = run_openmono(["up"], stack_env)
    assert up.returncode == 1
    assert "port" in up.stderr and "in use" in up.stderr
    assert "Traceback" not in up.stderr
    assert our_processes(tmp_path / "data") == []


def test_external_llama_upstream_starts_only_the_gateway(
    stack_env: dict[str, str], llama: LlamaServer
) -> None:
    stack_env["LLAMA_UPSTREAM"] = llama.url
    stack_env["LLAMA_API_KEY"] = llama.api_key
    up = run_openmono(["up"], stack_env)
    assert up.returncode == 0, up.stdout + up.stderr
    assert "llama-server" not in up.stdout.split("gateway   http")[0]
    gateway = f"http://127.0.0.1:{stack_env['GATEWAY_PORT']}"
    props = httpx.get(
        f"{gateway}/props", headers={"Authorization": f"Bearer {llama.api_key}"}, timeout=10
    )
    assert props.status_code == 200
    assert props.json()["default_generation_settings"]["n_ctx"] > 0
    status = run_openmono(["status", "--json"], stack_env, timeout=60)
    rows = {row["service"]: row for row in json.loads(status.stdout)}
    assert rows["llama (external)"]["healthy"]
    assert "llama-server" not in rows


def test_a_service_that_fails_rolls_back_with_its_log(
    stack_env: dict[str, str], tmp_path: Path
) -> None:
    """Settings that cannot work stop `up` before anything starts, with the reason."""
    stack_env["LLAMA_MODEL"] = str(tmp_path / "no-such-model.gguf")
    up = run_openmono(["up"], stack_env)
    assert up.returncode == 1
    assert "settings that cannot work" in up.stderr
    assert "llama-server: LLAMA_MODEL=" in up.stderr and "no-such-model.gguf" in up.stderr
    assert "Traceback" not in up.stderr
    assert our_processes(tmp_path / "data") == []


def _crawl(gateway: str, auth: dict[str, str], url: str) -> dict[str, Any]:
    r = httpx.post(
        f"{gateway}/firecrawl/v2/crawl", json={"url": url, "limit": 1}, headers=auth, timeout=30
    )
    assert r.status_code == 200, r.text
    deadline = time.monotonic() + 60
    while True:
        job = f"{gateway}/firecrawl/v2/crawl/{r.json()['id']}"
        status = httpx.get(job, headers=auth, timeout=30).json()
        if status["status"] != "scraping" or time.monotonic() > deadline:
            return dict(status)
        time.sleep(0.2)


def test_full_native_stack_with_worker_and_scrape(
    stack_env: dict[str, str], tmp_path: Path, llama: LlamaServer
) -> None:
    from tests.support.fixture_web import ARTICLE_SENTINEL, fixture_web

    stack_env.update(
        LLAMA_UPSTREAM=llama.url,
        LLAMA_API_KEY=llama.api_key,
        SCRAPE_PORT=str(free_port()),
        OPENMONO_BROKER_URL=f"redis://127.0.0.1:{free_port()}/0",
        WEB_SCRAPE_ENABLED="true",
        SCRAPE_ALLOW_CIDRS="127.0.0.0/8",
    )
    up = run_openmono(["up"], stack_env)
    assert up.returncode == 0, up.stdout + up.stderr
    for name in ("redis", "worker", "scrape", "scrape-worker", "keys", "gateway"):
        assert f"{name:<13} healthy in" in up.stdout, name
    assert '"scrape": true' in up.stdout
    rows = {
        r["service"]: r for r in json.loads(run_openmono(["status", "--json"], stack_env).stdout)
    }
    services = {"redis", "worker", "scrape", "scrape-worker", "keys", "gateway"}
    assert services | {"llama (external)"} <= set(rows)
    assert all(r["healthy"] for r in rows.values()), rows

    gateway = f"http://127.0.0.1:{stack_env['GATEWAY_PORT']}"
    auth = {"Authorization": f"Bearer {llama.api_key}"}
    with fixture_web(tmp_path) as site:
        r = httpx.post(
            f"{gateway}/scrape", json={"url": f"{site}/article"}, headers=auth, timeout=60
        )
        assert r.status_code == 200, r.text
        assert ARTICLE_SENTINEL in r.json()["content"]
        # a crawl runs in the scrape worker, which reads its pages itself (with Redis's password)
        crawl = _crawl(gateway, auth, f"{site}/article")
    assert crawl["status"] == "completed" and crawl["completed"] == 1, crawl
    assert ARTICLE_SENTINEL in crawl["data"][0]["markdown"]
    # issue 36 finding 11: after a whole stack ran a call, nothing of its data dir is open to others
    assert exposed(tmp_path / "data") == ([], 0)

    # a service whose process is gone (its keeper too: the whole group) is not healthy,
    # whatever its port or log says
    for name in ("scrape", "worker"):
        os.killpg(os.getpgid(rows[name]["pid"]), signal.SIGKILL)
    gone = run_openmono(["status", "--json"], stack_env, timeout=60)
    assert gone.returncode == 1
    after = {r["service"]: r for r in json.loads(gone.stdout)}
    for name in ("scrape", "worker"):
        assert not after[name]["healthy"] and after[name]["detail"] == "not running", after[name]
    assert after["gateway"]["healthy"] and after["redis"]["healthy"]

    down = run_openmono(["down"], stack_env, timeout=60)
    assert down.returncode == 0
    assert down.stdout.count("stopped ") == 4
    assert our_processes(tmp_path / "data") == []


def test_a_broken_gguf_is_reported_at_once_with_the_log_tail(
    stack_env: dict[str, str], tmp_path: Path
) -> None:
    """The real xllamacpp server on a few random bytes named x.gguf: llama.cpp refuses the file
    and the process dies within a second; `up` said "did not become healthy within 180 s" over a
    Python traceback."""
    broken = tmp_path / "x.gguf"
    broken.write_bytes(os.urandom(64))
    stack_env["LLAMA_MODEL"] = str(broken)
    started = time.monotonic()
    up = run_openmono(["up"], stack_env)
    took = time.monotonic() - started
    assert up.returncode == 1, up.stdout + up.stderr
    first = up.stderr.splitlines()[0]
    assert first.startswith("error: llama-server exited after ") and "with exit code 1" in first
    assert "180 s" not in up.stderr and "Traceback" not in up.stderr
    assert "failed to load model" in up.stderr  # llama.cpp's own reason, from the log's tail
    assert f"llama-server: could not start with {broken}" in up.stderr
    assert took < 60, took
    assert our_processes(tmp_path / "data") == []


def _rows(env: dict[str, str]) -> dict[str, dict[str, object]]:
    done = run_openmono(["status", "--json"], env, timeout=60)
    return {row["service"]: row for row in json.loads(done.stdout)}


def _wait_row(env: dict[str, str], name: str, until: object, timeout_s: float = 30.0) -> dict:  # type: ignore[type-arg]
    deadline = time.monotonic() + timeout_s
    while True:
        row = _rows(env)[name]
        if until(row) or time.monotonic() > deadline:  # type: ignore[operator]
            return row
        time.sleep(0.3)


def test_a_crashed_service_is_started_again_then_given_up(
    stack_env: dict[str, str], tmp_path: Path, llama: LlamaServer
) -> None:
    """The keys service SIGKILLed from outside: its keeper starts it again (count and last exit in
    `openmono status`, a line in its log); killed again and again, it is given up, and says so."""
    stack_env |= {"LLAMA_UPSTREAM": llama.url, "LLAMA_API_KEY": llama.api_key}
    stack_env |= {"STACK_RESTART_LIMIT": "2", "STACK_RESTART_BACKOFF_S": "0.2"}
    up = run_openmono(["up"], stack_env)
    assert up.returncode == 0, up.stdout + up.stderr
    first = _rows(stack_env)["keys"]
    assert first["healthy"] and first["restarts"] == 0
    os.kill(int(first["pid"]), signal.SIGKILL)  # type: ignore[call-overload]
    row = _wait_row(stack_env, "keys", lambda r: r["restarts"] == 1 and r["healthy"])
    assert row["healthy"] and row["restarts"] == 1, row
    assert row["pid"] != first["pid"]
    assert "killed by SIGKILL" in str(row["last_exit"]) and "restarted 1x" in str(row["detail"])
    log = (tmp_path / "data" / "stack" / "logs" / "keys.log").read_text()
    assert "keeper: keys ended after" in log and "starting it again in 0.2 s" in log
    # a second crash within STABLE_S of the first: two in a row, the limit: given up
    os.kill(int(row["pid"]), signal.SIGKILL)  # type: ignore[call-overload]
    row = _wait_row(stack_env, "keys", lambda r: "GAVE UP" in str(r["detail"]))
    assert "GAVE UP: crashed 2 times in a row (last: killed by SIGKILL)" in str(row["detail"]), row
    assert row["pid"] is None and not row["healthy"]
    status = run_openmono(["status"], stack_env, timeout=60)
    assert status.returncode == 1 and "GAVE UP" in status.stdout
    assert (
        "gave up (`openmono up` starts it again)"
        in (tmp_path / "data" / "stack" / "logs" / "keys.log").read_text()
    )
    again = run_openmono(["up"], stack_env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert _rows(stack_env)["keys"]["restarts"] == 0


def _metrics_prompt_tokens(port: int, key: str) -> int:
    text = httpx.get(
        f"http://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {key}"}, timeout=10
    ).text
    line = next(x for x in text.splitlines() if x.startswith("llamacpp:prompt_tokens_total"))
    return int(float(line.split()[-1]))


def test_two_local_replicas_behind_the_router(stack_env: dict[str, str], tmp_path: Path) -> None:
    """LLAMA_REPLICAS=2 (issue 40): two llama-servers of the bundled model and the router, both
    serving through the gateway; /services and `openmono status` list both healthy, then the one
    whose process group was killed (keeper and all: it stays down) as unhealthy within seconds,
    and a chat still answers. Its replica port comes from native_stack_env (LLAMA_REPLICA_PORT)."""
    stack_env["LLAMA_REPLICAS"] = "2"
    up = run_openmono(["up"], stack_env)
    assert up.returncode == 0, up.stdout + up.stderr
    for name in ("llama-server", "llama-server-2", "llm-router"):
        assert f"{name:<13} healthy in" in up.stdout, name
    env_file = dict(
        line.split("=", 1)
        for line in Path(stack_env["OPENMONO_ENV_FILE"]).read_text().splitlines()
        if "=" in line and not line.startswith("#")
    )
    key, internal = env_file["LLAMA_API_KEY"], env_file["LLAMA_UPSTREAM_KEY"]
    gateway = f"http://127.0.0.1:{stack_env['GATEWAY_PORT']}"
    ports = [int(stack_env["LLAMA_PORT"]), int(stack_env["LLAMA_REPLICA_PORT"])]
    both = [{"name": "llama-1", "healthy": True}, {"name": "llama-2", "healthy": True}]

    def replicas() -> object:
        return httpx.get(f"{gateway}/services", timeout=10).json()["llm_replicas"]

    wait_until(lambda: replicas() == both, 30, "/services lists both replicas healthy")

    # both serve through the gateway: a second request while the first one streams goes to the
    # idle replica (the router balances on any imbalance)
    before = [_metrics_prompt_tokens(p, internal) for p in ports]
    auth = {"Authorization": f"Bearer {key}"}
    held = {
        "messages": [{"role": "user", "content": "tell a long story"}],
        "max_tokens": 96,
        "ignore_eos": True,
        "stream": True,
    }
    short = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}
    with (
        httpx.Client(timeout=120, headers=auth) as client,
        client.stream("POST", f"{gateway}/v1/chat/completions", json=held) as stream,
    ):
        assert stream.status_code == 200
        lines = stream.iter_lines()
        next(line for line in lines if line.startswith("data: "))  # in flight now
        second = client.post(f"{gateway}/v1/chat/completions", json=short)
        assert second.status_code == 200, second.text
        assert any("[DONE]" in line for line in lines)
    after = [_metrics_prompt_tokens(p, internal) for p in ports]
    assert all(a > b for a, b in zip(after, before, strict=True)), (before, after)

    rows = {
        r["service"]: r for r in json.loads(run_openmono(["status", "--json"], stack_env).stdout)
    }
    assert rows["llama-server-2"]["gateway"] == "llama-2=healthy"
    assert "router: healthy" in rows["llama-server-2"]["detail"]

    # the second replica's whole process group (its keeper too, so nothing starts it again)
    pid = rows["llama-server-2"]["pid"]
    os.killpg(os.getpgid(pid), signal.SIGKILL)
    killed = time.monotonic()
    down = [{"name": "llama-1", "healthy": True}, {"name": "llama-2", "healthy": False}]
    wait_until(lambda: replicas() == down, 15, "/services says llama-2 unhealthy")
    seen_after = time.monotonic() - killed
    status = run_openmono(["status", "--json"], stack_env, timeout=60)
    row = {r["service"]: r for r in json.loads(status.stdout)}["llama-server-2"]
    assert not row["healthy"] and row["gateway"] == "llama-2=unhealthy", row
    assert "router: UNHEALTHY" in row["detail"]
    answer = httpx.post(f"{gateway}/v1/chat/completions", json=short, headers=auth, timeout=120)
    assert answer.status_code == 200, answer.text
    print(f"llama-2 reported unhealthy {seen_after:.1f} s after the kill")

    # back to one replica: the router and the second replica's records go, /services says null
    stack_env["LLAMA_REPLICAS"] = "1"
    again = run_openmono(["up"], stack_env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "stopped llm-router" in again.stdout
    wait_until(lambda: replicas() is None, 15, "/services without a router")
