"""Switches that apply and a status that tells the truth (issue 27 item 3), on a real native stack:
Caddy and the scrape service on free ports, an external llama upstream (a tiny HTTP server)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.httpfake import Reply, serve
from tests.support.native_stack import native_stack_env, run_openmono

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture
def stack_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    with (
        serve(lambda req: Reply(200, b'{"status":"ok"}', "application/json")) as llm,
        native_stack_env(tmp_path) as env,
    ):
        # no WEB_*_ENABLED in the shell: the env file (absent) decides, as for a newcomer
        env.pop("WEB_SCRAPE_ENABLED")
        env.pop("WEB_SEARCH_ENABLED")
        env["LLAMA_UPSTREAM"] = llm.url
        env["SCRAPE_PORT"] = str(_free())
        yield env


def _free() -> int:
    from tests.support.procs import free_port

    return free_port()


def _views(env: dict[str, str]) -> tuple[dict[str, dict[str, object]], int]:
    done = run_openmono(["status", "--json"], env, timeout=60)
    return {row["service"]: row for row in json.loads(done.stdout)}, done.returncode


def _firecrawl(env: dict[str, str]) -> httpx.Response:
    key = next(
        line.split("=", 1)[1]
        for line in Path(env["OPENMONO_ENV_FILE"]).read_text().splitlines()
        if line.startswith("LLAMA_API_KEY=")
    )
    return httpx.post(
        f"http://127.0.0.1:{env['GATEWAY_PORT']}/firecrawl/v1/scrape",
        headers={"Authorization": f"Bearer {key}"},
        json={"url": "http://127.0.0.1:9/"},
        timeout=30,
    )


def _services(env: dict[str, str]) -> dict[str, bool]:
    url = f"http://127.0.0.1:{env['GATEWAY_PORT']}/services"
    data: dict[str, bool] = httpx.get(url, timeout=10).json()
    return data


def test_a_switch_changed_and_up_again_reloads_the_gateway(stack_env: dict[str, str]) -> None:
    up = run_openmono(["up"], stack_env)
    assert up.returncode == 0, up.stdout + up.stderr
    assert _services(stack_env)["scrape"] is False
    assert _firecrawl(stack_env).status_code == 503

    # the finding: scrape started, but the running gateway kept /services at scrape=false and
    # /firecrawl at 503 while status said healthy
    on = run_openmono(["up"], {**stack_env, "WEB_SCRAPE_ENABLED": "true"})
    assert on.returncode == 0, on.stdout + on.stderr
    assert "note: WEB_SCRAPE_ENABLED=true comes from this shell" in on.stdout
    assert "gateway       started with other settings" in on.stdout
    assert "WEB_SCRAPE_ENABLED" in on.stdout.split("started with other settings")[1]
    assert _services(stack_env)["scrape"] is True
    assert _firecrawl(stack_env).status_code != 503
    rows, code = _views({**stack_env, "WEB_SCRAPE_ENABLED": "true"})
    assert code == 0
    assert rows["scrape"]["healthy"] and rows["scrape"]["gateway"] == "scrape=true"
    assert all(row["agrees"] for row in rows.values())

    # a start from a shell without the variable goes back to the env file, and says what it did
    off = run_openmono(["up"], stack_env)
    assert off.returncode == 0, off.stdout + off.stderr
    assert "stopped scrape" in off.stdout and "WEB_SCRAPE_ENABLED is unset" in off.stdout
    assert _services(stack_env)["scrape"] is False
    assert _firecrawl(stack_env).status_code == 503
    rows, code = _views(stack_env)
    assert code == 0 and "scrape" not in rows
    # switched-off upstreams are not health-checked: nothing in the log ever asked the scrape port
    log = Path(stack_env["OPENMONO_DATA_DIR"]) / "stack" / "logs" / "gateway.log"
    lines = log.read_text().splitlines()
    last_start = max(i for i, line in enumerate(lines) if line.startswith("--- "))
    assert not [x for x in lines[last_start:] if f"127.0.0.1:{stack_env['SCRAPE_PORT']}" in x]


def test_setup_scraper_writes_the_switch_so_a_later_start_keeps_it(
    stack_env: dict[str, str],
) -> None:
    assert run_openmono(["up"], stack_env).returncode == 0
    # --via auto finds the native stack that runs (it planned compose, "no Docker engine answers")
    plan = run_openmono(["setup", "scraper", "--dry-run"], stack_env)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert "would start the native stack (the native gateway runs (pid " in plan.stdout
    done = run_openmono(["setup", "scraper"], stack_env)
    assert done.returncode == 0, done.stdout + done.stderr
    env_file = Path(stack_env["OPENMONO_ENV_FILE"]).read_text()
    assert "WEB_SCRAPE_ENABLED=true" in env_file.splitlines()
    assert _services(stack_env)["scrape"] is True
    again = run_openmono(["up"], stack_env)
    assert again.returncode == 0, again.stdout + again.stderr
    # nothing restarts: the switch was already applied, every service runs on
    rows = [line for line in again.stdout.splitlines() if re.match(r"\[\d+/\d+\] ", line)]
    assert rows and all("already running" in row for row in rows), again.stdout
    assert any(row.split()[1] == "scrape" for row in rows), again.stdout
    assert _services(stack_env)["scrape"] is True


def test_status_of_a_stack_that_is_down_is_not_an_error(stack_env: dict[str, str]) -> None:
    done = run_openmono(["status"], stack_env, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the native stack is not running" in done.stdout
