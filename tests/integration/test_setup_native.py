"""`openmono setup search` for real, without Docker: the native stack's gateway starts with search
switched on, the agent's settings point at it, and a second run changes nothing but restarts
the gateway. `openmono down` stops what it started.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from openmono_contracts import ToolRequest, WebAccess
from openmono_worker import run_tool
from openmono_worker.web import clear_probe_cache

from tests.support.fake_searxng import FakeSearxng, fake_searxng
from tests.support.httpfake import Reply, serve
from tests.support.procs import ROOT, free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def openmono(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "openmono.cli", *args],
        env=env,
        cwd=str(ROOT),
        capture_output=True,
        text=True,
        timeout=120,
        start_new_session=True,
        check=False,
    )


@pytest.fixture
def sx() -> Iterator[FakeSearxng]:
    with fake_searxng() as fake:
        yield fake


def test_setup_search_starts_the_native_gateway(tmp_path: Path, sx: FakeSearxng) -> None:
    port = free_port()
    env_file = tmp_path / "compose.env"
    env_file.write_text(
        f"GATEWAY_PORT={port}\nGATEWAY_TLS_PORT={free_port()}\nSEARXNG_UPSTREAM={sx.url}\n"
        # every port the stack opens is free, so a developer's `make up` on the defaults can run
        f"KEYS_PORT={free_port()}\nKEYS_TAP_PORT={free_port()}\n"
        # on by default now; this test is about search and must not take the scrape port
        "WEB_SCRAPE_ENABLED=false\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENMONO_", "LLAMA_"))}
    names = ("GATEWAY_PORT", "GATEWAY_TLS_PORT", "SEARXNG_UPSTREAM", "WEB_SEARCH_ENABLED")
    names += ("KEYS_PORT", "KEYS_TAP_PORT")
    for name in (*names, "WEB_SCRAPE_ENABLED"):
        env.pop(name, None)
    with serve(lambda req: Reply(200, b'{"status":"ok"}', "application/json")) as llm:
        env.update(
            {
                "OPENMONO_ROOT": str(ROOT),
                "OPENMONO_ENV_FILE": str(env_file),
                "OPENMONO_DATA_DIR": str(tmp_path / "data"),
                "OPENMONO_FRPC_CONFIG": str(tmp_path / "frpc.toml"),
                "LLAMA_UPSTREAM": llm.url,
            }
        )
        try:
            done = openmono(env, "setup", "search", "--via", "native")
            assert done.returncode == 0, done.stdout + done.stderr
            assert "generate LLAMA_API_KEY (missing)" in done.stdout
            assert "gateway" in done.stdout and "healthy" in done.stdout
            gateway = f"http://127.0.0.1:{port}"
            services = httpx.get(f"{gateway}/services", timeout=5).json()
            assert services == {
                "llm": True,
                "llm_replicas": None,
                "search": True,
                "scrape": False,
                "crawl_durable": False,
            }

            # The agent's settings now lead to the gateway: search goes through it.
            cfg = json.loads((tmp_path / "data" / "settings.json").read_text())
            assert cfg["web"]["gateway"] == gateway
            clear_probe_cache()
            web = WebAccess(gateway=cfg["web"]["gateway"], api_key=cfg["llm"]["api_key"])
            req = ToolRequest(
                tool="WebSearch",
                params={"query": "hello"},
                call_id="c",
                session_id="s",
                workspace=str(tmp_path),
                web=web,
            )
            res = run_tool(req)
            assert res.output.startswith(f"[WebSearch via gateway: SearXNG via {gateway}]")
            assert len(sx.searches()) == 1

            before = env_file.read_bytes()
            again = openmono(env, "setup", "search", "--via", "native")
            assert again.returncode == 0, again.stdout + again.stderr
            assert again.stdout.count("up to date") == 2
            assert "stopped the gateway" in again.stdout
            assert env_file.read_bytes() == before
            assert httpx.get(f"{gateway}/services", timeout=5).json()["search"] is True
        finally:
            down = openmono(env, "down")
        assert down.returncode == 0, down.stdout + down.stderr
        assert "stopped gateway" in down.stdout
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
