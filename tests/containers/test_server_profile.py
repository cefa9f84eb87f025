"""`--profile server` alone, keys per agent box on it, and what `up` refuses at once (a
placeholder key, no model).

Keys per box in compose: `openmono keys --via compose` against the module's project. The store is
the `gateway-keys` volume of the `keys` container (caddy reads it, the worker never mounts it); a
change is applied by SIGUSR1 to caddy, not a restart; usage comes from the records caddy writes
into `gateway-usage`. The two tests share one stack (one model load, one `down -v`): the keys test
adds box keys only, which the other does not look at.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.containers.conftest import ROOT, Project, ProjectFactory

pytestmark = [pytest.mark.containers, pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def server(project: ProjectFactory) -> Iterator[Project]:
    # the bundled SmolLM2 with the template that renders tools (what `openmono setup model` sets)
    p = project(LLAMA_CHAT_TEMPLATE="smollm2-tools.jinja")
    p.up("server")
    p.wait_healthy("keys", "llama-server", "caddy")
    yield p
    p.down()
    assert p.leftovers() == {"containers": [], "networks": [], "volumes": []}


def test_server_alone_serves_the_model_and_no_search(server: Project) -> None:
    p = server
    services = httpx.get(f"{p.gateway}/services", timeout=10).json()
    assert services["llm"] is True
    assert services["search"] is False  # the gateway asks SearXNG itself: none runs here
    # and /search is a fast JSON "unavailable", which the agent treats as off
    start = time.monotonic()
    r = httpx.get(f"{p.gateway}/search", params={"q": "x", "format": "json"}, headers=p.auth)
    assert time.monotonic() - start < 5
    assert r.status_code in (502, 503), r.text  # 503 once the passive check took it out
    assert r.json()["error"] == "upstream_unavailable"
    r = httpx.get(f"{p.gateway}/v1/models", headers=p.auth, timeout=30)
    assert r.status_code == 200
    props = httpx.get(f"{p.gateway}/props", headers=p.auth, timeout=30).json()
    assert props["chat_template_caps"]["supports_tools"] is True  # --chat-template-file took


def _keys(p: Project, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENMONO_ENV_FILE": str(p.env_file), "OPENMONO_ROOT": str(ROOT)}
    done = subprocess.run(
        ["uv", "run", "--frozen", "openmono", "keys", *args, "--via", "compose"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    return done


def _status(p: Project, key: str) -> int:
    headers = {"Authorization": f"Bearer {key}"}
    return httpx.get(f"{p.gateway}/v1/models", headers=headers, timeout=30).status_code


def test_keys_in_compose_without_a_restart(server: Project) -> None:
    p = server
    caddy_started = p.inspect("caddy")["State"]["StartedAt"]  # type: ignore[index]

    added = _keys(p, "add", "laptop-anna", "--rate", "2/min")
    assert added.returncode == 0, added.stdout + added.stderr
    anna = added.stdout.splitlines()[1]
    assert anna.startswith("omk_")
    assert [_status(p, anna) for _ in range(3)] == [200, 200, 429]
    assert _status(p, p.key) == 200  # the operator's key is not limited

    # the store holds hashes only, in a volume the worker never mounts
    stored = p.exec("keys", "cat", "/keys/keys.json").stdout
    assert "$2b$04$" in stored and anna[4:] not in stored
    compose = (ROOT / "compose" / "docker-compose.yml").read_text()
    worker = compose.split("\n  worker:")[1].split("\n  agent:")[0]
    assert "gateway-keys" not in worker

    again = _keys(p, "add", "laptop-anna")
    assert again.returncode == 2 and "exists" in again.stderr

    # tokens per key: the gateway sends LLM requests through the key service's token tap, which
    # writes the response's counts into gateway-usage beside caddy's records
    box = _keys(p, "add", "ci-box").stdout.splitlines()[1]
    chat = httpx.post(
        f"{p.gateway}/v1/chat/completions",
        headers={"Authorization": f"Bearer {box}"},
        json={"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 4},
        timeout=120,
    )
    assert chat.status_code == 200, chat.text
    served = chat.json()["usage"]
    counted = json.loads(_keys(p, "usage", "--json").stdout)["rows"]
    row = next(r for r in counted if (r["key"], r["route"]) == ("ci-box", "/v1/chat/completions"))
    assert row["counted"] == 1
    assert (row["prompt_tokens"], row["completion_tokens"]) == (
        served["prompt_tokens"],
        served["completion_tokens"],
    )

    started = time.monotonic()
    revoked = _keys(p, "revoke", "laptop-anna")
    assert revoked.returncode == 0, revoked.stderr
    took = time.monotonic() - started
    print(f"compose revoke (two docker compose calls and the reload): {took:.1f} s")
    resp = httpx.get(
        f"{p.gateway}/v1/models", headers={"Authorization": f"Bearer {anna}"}, timeout=30
    )
    assert resp.status_code == 401 and resp.json() == {"error": "unauthorized"}
    assert p.inspect("caddy")["State"]["StartedAt"] == caddy_started  # reloaded, not restarted

    listing = _keys(p, "list", "--json")
    assert listing.returncode == 0, listing.stderr
    rows = json.loads(listing.stdout)["usage"]["rows"]
    used = {(r["key"], r["statuses"].get("429", 0)) for r in rows if r["route"] == "/v1/models"}
    assert ("laptop-anna", 1) in used


def _refused(project: ProjectFactory, **env: str) -> str:
    p = project(**env)
    start = time.monotonic()
    with pytest.raises(AssertionError) as refused:
        p.up("server", timeout=180)
    took = time.monotonic() - start
    logs = p.logs("preflight")
    p.down()
    assert "preflight" in str(refused.value), refused.value
    assert took < 60, f"up took {took:.0f} s to fail"
    return logs


def test_a_placeholder_key_fails_up_at_once(project: ProjectFactory) -> None:
    logs = _refused(project, LLAMA_API_KEY="change-me-to-a-long-random-string")
    assert "LLAMA_API_KEY is the placeholder" in logs


def test_no_model_fails_up_at_once_saying_how_to_provide_one(
    project: ProjectFactory, tmp_path: Path
) -> None:
    empty = tmp_path / "no-models"
    empty.mkdir()
    logs = _refused(project, MODELS_DIR=str(empty))
    assert "openmono setup model" in logs
    assert "LLAMA_ARG_HF_REPO" in logs
