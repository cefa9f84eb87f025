"""Finding 8: the scrape service's Chromium ran as root with `--no-sandbox`.

Every page the browser engine rendered ran its scripts in a renderer with root's rights and no
sandbox (Playwright adds `--no-sandbox` unless asked not to, and the default flags said it too):
one renderer exploit, from any page a crawl or a WebFetch rendered, was root on the box. Now
Chromium never runs as root (a service running as root, as the native stack started by root
does, starts it as an unprivileged user) and its own sandbox is on: each renderer in its own
user namespace, under seccomp, without capabilities.

The real scrape service, started as this test runs (root on CI and here), renders a local page;
the test reads its process tree from /proc. Skipped only without Chromium.
"""

from __future__ import annotations

import os
import pwd
import sys
import time
from pathlib import Path

import pytest
from openmono_scrape.settings import ScrapeSettings

from tests.support.procs import descendants, free_port, running
from tests.support.scrape_fixtures import ok, scrape

CHROMIUM = ScrapeSettings().browser_path
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium)"),
]


def _status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {k: v.strip() for k, _, v in (line.partition(":") for line in lines)}


def _chromium(pids: list[int]) -> dict[int, list[str]]:
    """The Chromium processes among `pids`, with their arguments (the zygote's children rewrite
    their command line into one string: split it again)."""
    found: dict[int, list[str]] = {}
    for pid in pids:
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
            raw = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if Path(exe).name == "chromium":
            argv = [a for a in raw.split("\0") if a]
            found[pid] = argv[0].split(" ") if len(argv) == 1 else argv
    return found


def test_chromium_runs_unprivileged_with_its_sandbox(tmp_path: Path, web: str) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "openmono_scrape", "--host", "127.0.0.1", "--port", str(port)]
    env = {"SCRAPE_ALLOW_CIDRS": "127.0.0.0/8", "SCRAPE_SYSTEM_DNS": "false"}
    with running(cmd, tmp_path / "scrape.log", env=env, ready_url=f"{url}/health") as proc:
        page = ok(scrape(url, url=f"{web}/article", render=True))
        assert page.engine == "browser"
        tree = _chromium(descendants(proc.pid))
        assert tree, "the browser should run under the service"
        service_ns = os.readlink(f"/proc/{proc.pid}/ns/user")
        browser = [argv for argv in tree.values() if not any(a.startswith("--type=") for a in argv)]
        assert browser and all("--no-sandbox" not in argv for argv in tree.values()), browser
        for pid in tree:
            status = _status(pid)
            uid = int(status["Uid"].split()[0])
            assert uid != 0, f"chromium {pid} runs as root: {tree[pid][:3]}"
            if os.readlink(f"/proc/{pid}/ns/user") == service_ns:  # (inside its own namespace,
                # a sandboxed process holds capabilities over that namespace alone)
                assert status["CapEff"].strip("0") == "", (pid, status["CapEff"])
            assert status["NoNewPrivs"] == "1", pid
            if os.geteuid() == 0:  # the service is root: Chromium runs as the browser user
                assert pwd.getpwuid(uid).pw_name in ("openmono-browser", "nobody")
        renderers = [pid for pid, argv in tree.items() if "--type=renderer" in argv]
        assert renderers, {p: a[:2] for p, a in tree.items()}
        for pid in renderers:  # the sandbox proper: a namespace of its own, under seccomp
            assert _status(pid)["Seccomp"] == "2", pid
            assert os.readlink(f"/proc/{pid}/ns/user") != service_ns, pid
        profile = next(
            (a.split("=", 1)[1] for a in browser[0] if a.startswith("--user-data-dir=")), None
        )
    # the browser user's profile folder goes with the browser (the service removed it)
    assert profile is not None
    deadline = time.monotonic() + 10
    while Path(profile).exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    if os.geteuid() == 0:
        assert not Path(profile).exists(), profile
