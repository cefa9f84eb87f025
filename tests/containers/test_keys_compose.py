"""Keys per agent box in compose: `openmono keys --via compose` against a test-owned project.

The store is the `gateway-keys` volume of the `keys` container (caddy reads it, the worker never
mounts it); a change is applied by SIGUSR1 to caddy, not a restart; usage comes from the records
caddy writes into `gateway-usage`.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import httpx
import pytest

from tests.containers.conftest import ROOT, Project, ProjectFactory

pytestmark = [pytest.mark.containers, pytest.mark.slow, pytest.mark.timeout(900)]


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


def test_keys_in_compose_without_a_restart(project: ProjectFactory) -> None:
    p = project()
    p.up("server")
    p.wait_healthy("keys", "llama-server", "caddy")
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
