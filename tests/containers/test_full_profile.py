"""`docker compose --profile full up -d`: scrape, agent and worker in containers.

With a test-only override (tests/containers/compose.test.yml): a page served inside the compose
network (SCRAPE_ALLOW_CIDRS allows that network's subnet, for this test only) and a scripted model
the agent can be pointed at, so its tool call is deterministic. The stack runs as uid/gid 4321, not
the images' 1000, so the volume ownership has to follow OPENMONO_UID/GID.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from testcontainers.core.network import Network

from tests.containers.conftest import Project, ProjectFactory, engine_client
from tests.containers.recovery import BOUND_S, cpu_hogs, crash_and_recover

pytestmark = [pytest.mark.containers, pytest.mark.slow, pytest.mark.timeout(1200)]

UID = 4321
CANARY = "omc-7d1f3a"
# what the scripted model asks the agent to run: where it ran, and a process left behind
BASH = "hostname > /workspace/where.txt; (sleep 1 &); echo started"


@pytest.fixture(scope="module")
def stack(project: ProjectFactory) -> Iterator[Project]:
    # the test's own network (testcontainers' Network), named for compose.test.yml
    with Network() as network:
        subnet = engine_client().networks.get(network.name).attrs["IPAM"]["Config"][0]["Subnet"]
        p = project(
            "compose.yaml",
            "tests/containers/compose.test.yml",
            TEST_NETWORK=network.name,
            SCRAPE_ALLOW_CIDRS=subnet,
            OPENMONO_UID=str(UID),
            OPENMONO_GID=str(UID),
            SCRIPTED_BASH=BASH,
            # crawl jobs go to the broker, where the scrape worker serves them
            SCRAPE_CRAWL_BROKER_URL="redis://redis:6379/0",
        )
        start = time.monotonic()
        p.up("full")
        p.wait_healthy(
            "caddy", "searxng", "scrapling", "scrape-worker", "worker", "agent", timeout=600
        )
        print(f"\n--profile full healthy in {time.monotonic() - start:.1f} s")
        yield p
        p.down()
        assert p.leftovers() == {"containers": [], "networks": [], "volumes": []}


def test_scrape_through_the_gateway_of_a_page_inside_the_network(stack: Project) -> None:
    assert httpx.get(f"{stack.gateway}/services", timeout=10).json()["scrape"] is True
    r = httpx.post(
        f"{stack.gateway}/scrape", json={"url": "http://web:8000/"}, headers=stack.auth, timeout=90
    )
    assert r.status_code == 200, r.text
    assert CANARY in r.json()["content"]


def test_a_crawl_runs_in_the_scrape_worker_which_reads_its_pages_itself(stack: Project) -> None:
    assert httpx.get(f"{stack.gateway}/services", timeout=10).json()["crawl_durable"] is True
    r = httpx.post(
        f"{stack.gateway}/firecrawl/v2/crawl",
        json={"url": "http://web:8000/", "limit": 1, "scrapeOptions": {"maxAge": 0}},
        headers=stack.auth,
        timeout=30,
    )
    assert r.status_code == 200, r.text
    deadline = time.monotonic() + 90
    while True:
        status = httpx.get(
            f"{stack.gateway}/firecrawl/v2/crawl/{r.json()['id']}", headers=stack.auth, timeout=30
        ).json()
        if status["status"] != "scraping" or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert status["status"] == "completed" and status["completed"] == 1, status
    assert CANARY in status["data"][0]["markdown"]
    # the page was read in the scrape worker's container (its log), not asked of the service
    assert "slice ended" in stack.logs("scrape-worker")


def test_the_scrape_container_and_its_chromium_run_unprivileged(stack: Project) -> None:
    # issue 36 finding 8: no process of the scrape container is root or holds a capability,
    # Chromium's included (rendered here through the gateway)
    r = httpx.post(
        f"{stack.gateway}/scrape",
        json={"url": "http://web:8000/", "render": True},
        headers=stack.auth,
        timeout=120,
    )
    assert r.status_code == 200 and r.json()["engine"] == "browser", r.text
    rows = _processes(stack)
    assert any("chromium" in exe for _, exe, _, _ in rows), rows
    # `runc init` is the runtime starting an exec (the healthcheck's, every 3 s): root with the
    # runtime's capabilities until it drops them and becomes the exec'd command. It is no process
    # of the image, but it must not stay: each one seen is gone or unprivileged moments later.
    bootstrap = {pid for pid, exe, _, _ in rows if exe == "runc"}
    deadline = time.monotonic() + 10
    while bootstrap and time.monotonic() < deadline:
        time.sleep(0.5)
        later = {pid: (exe, uid, caps) for pid, exe, uid, caps in _processes(stack)}
        for pid in list(bootstrap):
            if pid not in later:
                bootstrap.discard(pid)
            elif later[pid][0] != "runc":
                assert _unprivileged(*later[pid][1:]), (pid, *later[pid])
                bootstrap.discard(pid)
    assert not bootstrap, f"runc init stayed privileged: {bootstrap}"
    for pid, exe, uid, caps in rows:
        if exe != "runc":
            assert _unprivileged(uid, caps), (pid, exe, uid, caps)


_PROCESSES = (
    "import pathlib, json\n"
    "rows = []\n"
    "for p in pathlib.Path('/proc').glob('[0-9]*'):\n"
    "    try:\n"
    "        st = dict(l.split(':\\t', 1) for l in (p / 'status').read_text().splitlines())\n"
    "        exe = (p / 'cmdline').read_bytes().split(b'\\0')[0].decode(errors='replace')\n"
    "    except OSError:\n"
    "        continue\n"
    "    rows.append([p.name, exe, st['Uid'].split()[0], st['CapEff'].strip()])\n"
    "print(json.dumps(rows))\n"
)


def _processes(stack: Project) -> list[tuple[str, str, str, str]]:
    """Each process of the scrape container: pid, program, real uid, effective capabilities."""
    done = stack.exec("scrapling", "python", "-c", _PROCESSES)
    return [tuple(row) for row in json.loads(done.stdout)]  # type: ignore[misc]


def _unprivileged(uid: str, caps: str) -> bool:
    return uid != "0" and caps.strip("0") == ""


def test_doctor_passes_in_the_agent_container(stack: Project) -> None:
    done = stack.exec("agent", "openmono", "doctor")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all checks passed" in done.stdout
    assert "in the worker" in done.stdout  # the workspace was checked where the tools run


def test_an_agent_tool_call_runs_in_the_worker_and_leaves_no_zombie(stack: Project) -> None:
    workspace = Path(stack.env["WORKSPACE_DIR"])
    done = stack.run(
        "--profile", "*", "exec", "-T", "-e", "OPENMONO_LLM_ENDPOINT=http://scripted-llm:8000",
        "agent", "openmono", "-p", "Run the script.", "--yolo", timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    where = workspace / "where.txt"
    assert where.is_file(), done.stdout
    worker = stack.inspect("worker")["Config"]["Hostname"]  # type: ignore[index]
    assert where.read_text().strip() == worker  # the worker's hostname, not the agent's
    assert where.stat().st_uid == UID
    # the backgrounded sleep ended; PID 1 (init: true) must have reaped it
    script = (
        "import pathlib,json; print(json.dumps([p.read_text().split(')')[-1].split()[0] "
        "for p in pathlib.Path('/proc').glob('[0-9]*/stat')]))"
    )
    deadline = time.monotonic() + 20
    while True:
        states = json.loads(stack.exec("worker", "python", "-c", script).stdout)
        if "Z" not in states or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert "Z" not in states, states


def test_the_agents_secrets_are_out_of_the_workers_reach(stack: Project) -> None:
    token = stack.env["OPENMONO_ACP_TOKEN"]
    key = stack.key
    assert len(token) >= 40
    hunt = f"grep -rlsF -e {token} -e {key} / --exclude-dir=proc --exclude-dir=sys || true"
    found = stack.exec("worker", "sh", "-c", hunt, timeout=120)
    assert found.stdout.strip() == "", found.stdout
    env = stack.exec("worker", "env").stdout
    assert token not in env and key not in env


def test_the_worker_and_agent_reach_the_gateway_and_broker_and_nothing_behind_them(
    stack: Project,
) -> None:
    """A command the model runs in the worker used to reach llama-server, the router (whose
    metrics answer without a key), the key service, SearXNG and the scrape service around the
    gateway. They are not even names on its network now (no packet is sent to any of them)."""
    script = (
        "import json, socket\n"
        "def known(name):\n"
        "    try:\n"
        "        return bool(socket.getaddrinfo(name, 80))\n"
        "    except socket.gaierror:\n"
        "        return False\n"
        "names = ['caddy', 'redis', 'llama-server', 'llm-router', 'keys', 'searxng',"
        " 'scrapling', 'scrape-worker']\n"
        "print(json.dumps({n: known(n) for n in names}))"
    )
    behind = ("llama-server", "llm-router", "keys", "searxng", "scrapling", "scrape-worker")
    for service in ("worker", "agent"):
        seen = json.loads(stack.exec(service, "python", "-c", script).stdout)
        assert seen["caddy"] and seen["redis"], (service, seen)
        assert not any(seen[name] for name in behind), (service, seen)


def test_the_agents_acp_wants_the_one_token_of_the_env_file(stack: Project) -> None:
    # the finding: in the compose agent the token of <data dir>/acp-token got 401 (a second token
    # nobody could read); now OPENMONO_ACP_TOKEN of compose/.env is the one token, as natively
    token = stack.env["OPENMONO_ACP_TOKEN"]
    # bound beyond loopback inside its container, the agent serves HTTPS with its own certificate
    base = f"https://127.0.0.1:{stack.env['ACP_PORT']}/api/v1/sessions"
    ok = httpx.get(base, headers={"Authorization": f"Bearer {token}"}, verify=False, timeout=30)
    assert ok.status_code == 200, ok.text
    other = httpx.get(base, headers={"Authorization": "Bearer not-it"}, verify=False, timeout=30)
    assert other.status_code == 401
    files = stack.exec("agent", "sh", "-c", "ls /agent-state; echo done").stdout
    assert "acp-token" not in files and "done" in files


def test_volumes_belong_to_the_configured_ids(stack: Project) -> None:
    for service in ("worker", "agent"):
        done = stack.exec(service, "sh", "-c", "id -u; test -w /data && echo data-writable")
        assert done.stdout.split() == [str(UID), "data-writable"], (service, done.stdout)
    # issue 36 finding 11: the shared data volume is its owner's alone, and so is what the worker
    # wrote in it (the tool call above ran there)
    modes = stack.exec("worker", "sh", "-c", "stat -c %a /data; find /data ! -type l -perm /077")
    assert modes.stdout.split() == ["700"], modes.stdout


def test_a_crashed_scrape_service_gives_json_502_then_serves_within_the_bound(
    stack: Project,
) -> None:
    body = {"url": "http://web:8000/"}
    url = f"{stack.gateway}/scrape"

    def attempt() -> bool:
        start = time.monotonic()
        r = httpx.post(url, json=body, headers=stack.auth, timeout=90)
        # The gateway retries a failed dial (caddy/README.md, "Several upstreams"): a retry may
        # dial into the restarting container and get its answer, a slightly slow 200; else a JSON
        # 502/503 at once
        if r.status_code == 200:
            assert CANARY in r.json()["content"]
            return True
        assert time.monotonic() - start < 5, "the gateway must answer at once, not hang"
        assert r.status_code in (502, 503), r.text
        assert r.json() == {
            "error": "upstream_unavailable",
            "service": "scrape",
            "status": r.status_code,
        }
        return False

    assert attempt()
    with cpu_hogs(2):
        recovery = crash_and_recover(stack, "scrapling", attempt)
    print(f"\n{recovery}")
    assert recovery.served_after_s <= BOUND_S, recovery
    assert recovery.healthy_after_s <= BOUND_S, recovery
    assert stack.health("caddy") == "healthy"
