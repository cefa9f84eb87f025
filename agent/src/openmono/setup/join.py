"""Joining an agent box and rotating its key: `openmono setup join`, `setup gateway --rotate-key`.

`join_lines()` is what an agent box pastes: the relay endpoint, the bearer key and the trust anchor
(the gateway's internal CA certificate, inline PEM). `rotate_key()` writes a new `LLAMA_API_KEY`
into `.env` and restarts the gateway, the only process that checks it (llama-server checks its own
`LLAMA_UPSTREAM_KEY`, stack/tls.py), so a loaded model keeps serving and the old key stops working
as soon as the new gateway answers. In compose that is `up -d --no-deps caddy`, then a wait until
the new caddy answers; the first rotation of a stack whose llama-server checks the client key
gives it its own key (one restart). The CA handed out is the running gateway's: native, else
compose's (`docker compose exec caddy`), never a stale file of an earlier native stack.
"""

from __future__ import annotations

import hashlib
import secrets
import shlex
import ssl
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from openmono_contracts.facts import API_KEY_ENV, UPSTREAM_KEY_ENV

from openmono.setup._errors import SetupError
from openmono.stack import read_env, set_env

Say = Callable[[str], None]
RELAY_URL_ENV = "GATEWAY_RELAY_URL"
# Caddy's storage inside the compose caddy container (the caddy-data volume, XDG_DATA_HOME=/data).
COMPOSE_CA_PATH = "/data/caddy/pki/authorities/local/root.crt"
_GATEWAY_WAIT_S = 120.0


def check_relay_url(url: str) -> str:
    """`https://host:port` without a path; plain http or a path is refused with the reason."""
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme != "https":
        raise SetupError(
            f"--relay-url {url!r}: the relay carries only TLS, so the URL starts with https:// "
            "(the relay forwards to the gateway's HTTPS port, GATEWAY_TLS_PORT)"
        )
    if not parts.hostname:
        raise SetupError(f"--relay-url {url!r} names no host")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise SetupError(f"--relay-url {url!r}: give the relay's address only, no path")
    return f"https://{parts.netloc}"


def fingerprint(pem: str) -> str:
    """SHA-256 of the certificate's DER form, `AB:CD:…` (what `openssl x509 -fingerprint` shows)."""
    digest = hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem)).hexdigest().upper()
    return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))


def _compose_ca(root: Path, env_file: Path) -> str | None:
    """The CA from the running compose gateway (`docker compose exec caddy cat …`), if any."""
    from openmono.setup._bringup import compose_command, docker_answers

    if not docker_answers():
        return None
    base = compose_command(root, env_file, "server")[:-2]  # without `up -d`
    done = _in_caddy(base, ["cat", COMPOSE_CA_PATH], timeout=30)
    if done is None or done.returncode != 0 or "BEGIN CERTIFICATE" not in done.stdout:
        return None
    return done.stdout


def _native_running(root: Path) -> bool:
    from openmono.setup._bringup import native_gateway_pid

    return native_gateway_pid(root) is not None


def _stack_ca(root: Path, env_file: Path, via: str) -> str:
    """The CA of the gateway that runs: a native CA file outlives its stack, so a box that once ran
    the native stack and now runs compose must not hand out the stale one (auto: a running native
    gateway, else the compose caddy's, else the native file)."""
    from openmono.stack import ca_cert_path, load_settings

    native = ca_cert_path(load_settings(root))
    native_pem = native.read_text() if native.is_file() else ""
    if via == "native" or (via == "auto" and native_pem and _native_running(root)):
        return native_pem
    return _compose_ca(root, env_file) or ("" if via == "compose" else native_pem)


def find_ca(root: Path | None, env_file: Path, ca_file: Path | None, via: str = "auto") -> str:
    """The gateway's CA certificate (PEM): `--ca-file`, else the running gateway's (`via`)."""
    if ca_file is not None:
        try:
            pem = ca_file.read_text()
        except OSError as exc:
            raise SetupError(f"--ca-file {ca_file}: {exc.strerror}") from exc
    else:
        pem = _stack_ca(root, env_file, via) if root is not None else ""
        if not pem:
            raise SetupError(
                "the gateway's CA certificate was not found: start the gateway once "
                "(`openmono up` or `docker compose --profile server up -d`), which creates it, "
                "or pass --ca-file PATH"
            )
    try:
        fingerprint(pem)
    except ValueError as exc:
        raise SetupError(f"the CA file holds no PEM certificate ({exc})") from exc
    return pem.strip() + "\n"


def join_lines(relay_url: str, api_key: str, ca_pem: str | None) -> list[str]:
    """The shell lines an agent box runs (POSIX sh quoting: PEM has no single quote)."""
    out = [
        "# On the agent box: paste into its shell (or its ~/.profile), then `openmono doctor`.",
        f"export OPENMONO_LLM_ENDPOINT={shlex.quote(relay_url)}",
        f"export OPENMONO_LLM_API_KEY={shlex.quote(api_key)}",
    ]
    if ca_pem:
        out.append(f"export OPENMONO_GATEWAY_CA='{ca_pem.strip()}'")
        out.append(f"# gateway CA, SHA-256: {fingerprint(ca_pem)}")
    else:
        out.append("# the gateway's certificate is public (GATEWAY_TLS_MODE): no anchor needed")
    return out


def join(
    root: Path | None,
    env_file: Path,
    relay_url: str,
    ca_file: Path | None = None,
    via: str = "auto",
    issue: Callable[[], str] | None = None,
) -> list[str]:
    """`openmono setup join`: check, remember the relay URL in `.env`, return the lines.

    `issue`: makes the box's own key (`--name`), asked only once everything else checked out, so
    a refused URL or a missing CA leaves no key behind; without it the lines carry LLAMA_API_KEY.
    """
    url = check_relay_url(relay_url)
    env = read_env(env_file)
    key = env.get(API_KEY_ENV, "")
    if not key:
        raise SetupError(f"no LLAMA_API_KEY in {env_file}: run `openmono setup gateway` first")
    mode = env.get("GATEWAY_TLS_MODE", "internal").strip() or "internal"
    ca = find_ca(root, env_file, ca_file, via) if mode == "internal" or ca_file else None
    if issue is not None:
        key = issue()
    if env.get(RELAY_URL_ENV) != url:
        set_env(env_file, {RELAY_URL_ENV: url})
    return join_lines(url, key, ca)


def reload_mode(root: Path, env_file: Path, via: str) -> tuple[str, str]:
    """compose or native: what `--via auto` means here (a running native gateway wins, then a
    running compose one, then a Docker engine that answers), and the fact that decided it."""
    from openmono.setup._bringup import pick

    choice = pick(root, env_file, via)
    return choice.mode, choice.why


def rotation_lines(root: Path | None, env_file: Path, via: str, why: str) -> list[str]:
    """What `rotate_key` would do, for `--dry-run` (reads, never writes or restarts)."""
    from openmono.config import ConfigError, read_settings_file, user_settings_file

    out = [
        "openmono setup gateway --rotate-key (dry run: nothing changes)",
        f"  would write a new LLAMA_API_KEY into {env_file} (mode 0600)",
    ]
    path = user_settings_file()
    try:
        llm = read_settings_file(path).get("llm")
    except ConfigError:
        llm = None
    if isinstance(llm, dict) and llm.get("api_key"):
        out.append(f"  would update llm.api_key in {path}")
    if root is None:
        out.append("  no OpenMono checkout here: the gateway would have to be restarted by hand")
        return out
    if via == "compose":
        env = read_env(env_file)
        if not (env.get("LLAMA_UPSTREAM") or env.get(UPSTREAM_KEY_ENV)):
            out.append(
                "  would generate LLAMA_UPSTREAM_KEY (llama-server's own key): llama-server "
                "would restart once"
            )
        out.append(f"  would recreate the compose gateway ({why})")
    elif _native_running(root):
        out.append(f"  would restart the native gateway ({why}): the old key stops working")
    else:
        out.append(
            f"  the native gateway does not run ({why}): the new key would apply at the "
            "next `openmono up`"
        )
    return out


def rotate_key(root: Path | None, env_file: Path, via: str, say: Say) -> str:
    """Replace LLAMA_API_KEY, restart what checks it; returns the new key (never printed here).
    `via` must be compose or native once `root` is known (`reload_mode`)."""
    new = secrets.token_urlsafe(32)
    upstream = _own_upstream_key(env_file, via) if root is not None else False
    set_env(env_file, {API_KEY_ENV: new})
    say(f"wrote a new LLAMA_API_KEY into {env_file} (mode 0600)")
    _update_local_agent(new, say)
    if root is None:
        say("no OpenMono checkout here: restart the gateway yourself so it reads the new key")
        return new
    if via == "compose":
        _reload_compose(root, env_file, say, gateway_only=not upstream)
    else:
        _reload_native(root, say)
    return new


def _own_upstream_key(env_file: Path, via: str) -> bool:
    """Compose: give llama-server its own key when it still checks the client's one, so this and
    every later rotation recreate only the gateway. True when generated now (llama-server then
    restarts once, to take it)."""
    env = read_env(env_file)
    if via != "compose" or env.get("LLAMA_UPSTREAM") or env.get(UPSTREAM_KEY_ENV):
        return False
    set_env(env_file, {UPSTREAM_KEY_ENV: secrets.token_urlsafe(32)})
    return True


def _update_local_agent(key: str, say: Say) -> None:
    """The local agent's settings keep working when `setup gateway` had stored the key there."""
    from openmono.config import ConfigError, read_settings_file, set_value, user_settings_file

    path = user_settings_file()
    try:
        llm = read_settings_file(path).get("llm")
        if isinstance(llm, dict) and llm.get("api_key"):
            set_value(path, "llm.api_key", f'"{key}"')
            say(f"updated llm.api_key in {path}")
    except ConfigError as exc:
        say(f"could not update {path}: {exc}")


def _reload_native(root: Path, say: Say) -> None:
    from openmono.stack import GATEWAY, Context, StackError, is_running, load_settings, restart

    ctx = Context(root, load_settings(root))
    if not is_running(ctx, GATEWAY):
        say("the native gateway is not running: the new key applies at the next `openmono up`")
        return
    try:
        restart(ctx, [GATEWAY.name], say)
    except StackError as exc:
        raise SetupError(str(exc)) from exc
    say("the gateway restarted: the old key is refused from now on")


def _reload_compose(root: Path, env_file: Path, say: Say, gateway_only: bool) -> None:
    from openmono.setup._bringup import BringUp, compose_command, run_compose

    command = compose_command(root, env_file, "server")
    if gateway_only:
        # only caddy checks LLAMA_API_KEY: the loaded model keeps serving
        command += ["--no-deps", "caddy"]
    else:
        say("llama-server restarts once, with its own LLAMA_UPSTREAM_KEY (generated into .env)")
    run_compose(BringUp("compose", "server", command), say)
    # `up -d` returns once the container started, before Caddy listens: wait for it, so the
    # new key works when this returns (the old one is refused from the moment caddy was replaced)
    base = command[: command.index("up")]
    deadline = time.monotonic() + _GATEWAY_WAIT_S
    while not _compose_gateway_answers(base):
        if time.monotonic() > deadline:
            raise SetupError(
                f"the gateway did not answer within {_GATEWAY_WAIT_S:.0f} s after its recreate: "
                f"see `{' '.join(base)} logs caddy`"
            )
        time.sleep(0.25)
    say("the gateway was recreated: the old key is refused from now on")


def _in_caddy(
    base: list[str], argv: list[str], timeout: float
) -> subprocess.CompletedProcess[str] | None:
    """`argv` run in the compose project's caddy container; None when it could not be run."""
    from openmono.setup._bringup import run_quietly

    return run_quietly([*base, "exec", "-T", "caddy", *argv], timeout)


def _compose_gateway_answers(base: list[str]) -> bool:
    probe = ["wget", "-qO-", "http://127.0.0.1:8080/health"]  # the service's own healthcheck
    done = _in_caddy(base, probe, timeout=10)
    return done is not None and done.returncode == 0
