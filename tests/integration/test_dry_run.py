"""`--dry-run` means nothing changes (issue 27 item 4), for every command that has it.

The commands are found in the click tree, not listed by hand: a new command with `--dry-run` is
walked too. Each runs with `--dry-run` alone, with each of its other flags and choices, and with
each flag beside each choice, against a running native stack (its gateway, on free ports), and
afterwards: no file of the checkout, the env file, the data dir or the frpc config changed, no
process of the stack started or stopped, the gateway still takes the key it had, and no compose
container of this test's project exists.
"""

from __future__ import annotations

import hashlib
import shlex
import subprocess
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from openmono.cli import main

from tests.support.dry_run import dry_run_commands, required, variants
from tests.support.httpfake import Reply, serve
from tests.support.native_stack import native_stack_env, our_processes, run_openmono
from tests.support.procs import ROOT

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# what the running gateway writes by itself (its log, Caddy's storage upkeep, the usage record of
# every request it answers, a dry run's reads included), not a command
_OWN_STATE = ("stack/logs", "stack/xdg-data", "stack/xdg-config", "stack/usage")


def snapshot(*roots: Path) -> dict[str, str]:
    """Every file under `roots`: its content's hash and mode."""
    out: dict[str, str] = {}
    for root in roots:
        for path in sorted(root.rglob("*")) if root.is_dir() else [root]:
            if any(part in str(path) for part in _OWN_STATE):
                continue
            if path.is_file() and not path.is_symlink():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                out[str(path)] = f"{digest} {path.stat().st_mode:o}"
    return out


def git_status() -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain"],
        capture_output=True, text=True, timeout=30, check=True,
    ).stdout  # fmt: skip


def compose_containers(project: str) -> str:
    try:
        done = subprocess.run(
            ["docker", "ps", "-aq", "--filter", f"label=com.docker.compose.project={project}"],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
    except OSError:
        return ""
    return done.stdout.strip()


def test_the_walk_finds_every_dry_run_command() -> None:
    found = [" ".join(path) for path, _ in dry_run_commands(main)]
    # today's commands; the walk finds new ones by itself
    assert {"setup gateway", "setup search", "setup scraper", "tunnel config"} <= set(found)


def test_dry_run_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = f"dryrun{tmp_path.name[-8:].replace('_', '').lower()}"
    with (
        serve(lambda req: Reply(200, b'{"status":"ok"}', "application/json")) as llm,
        native_stack_env(tmp_path) as env,
    ):
        env["LLAMA_UPSTREAM"] = llm.url
        env_file = Path(env["OPENMONO_ENV_FILE"])
        env_file.write_text(f"COMPOSE_PROJECT_NAME={project}\n")
        up = run_openmono(["up"], env)
        assert up.returncode == 0, up.stdout + up.stderr
        # an frpc config on the host, pointed elsewhere: setup would retarget it for real
        frpc = Path(env["OPENMONO_FRPC_CONFIG"])
        frpc.write_text(
            'serverAddr = "r"\nserverPort = 7000\nauth.token = "x"\ntransport.tls.enable = true\n'
            '[[proxies]]\nname = "openmono-gateway"\ntype = "tcp"\nlocalIP = "127.0.0.1"\n'
            "localPort = 1\nremotePort = 2\n"
        )
        key = next(
            line.split("=", 1)[1]
            for line in env_file.read_text().splitlines()
            if line.startswith("LLAMA_API_KEY=")
        )
        gateway = f"http://127.0.0.1:{env['GATEWAY_PORT']}"
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.chdir(tmp_path)
        files = snapshot(tmp_path)
        tracked = git_status()
        pids = sorted(our_processes(tmp_path / "data"))
        walked = []
        for path, command in dry_run_commands(main):
            for extra in variants(command):
                args = [*path, "--dry-run", *required(command), *extra]
                res = CliRunner().invoke(main, args)
                shown = "openmono " + shlex.join(args)
                walked.append(shown)
                assert res.exit_code in (0, 1), f"{shown}: {res.output}"
                assert "Traceback" not in res.output, shown
                assert snapshot(tmp_path) == files, f"{shown} changed a file"
                assert git_status() == tracked, f"{shown} changed the checkout"
                assert sorted(our_processes(tmp_path / "data")) == pids, f"{shown}: processes"
                assert compose_containers(project) == "", f"{shown} started compose"
                ok = httpx.get(
                    f"{gateway}/v1/models", headers={"Authorization": f"Bearer {key}"}, timeout=10
                )
                assert ok.status_code == 200, f"{shown}: the gateway no longer takes its key"
        # the finding: `setup gateway --rotate-key --dry-run` rotated the key for real
        assert "openmono setup gateway --dry-run --rotate-key" in walked
        assert len(walked) >= 30
