"""`openmono doctor`: one pass/fail line per thing the agent needs, and what to do about a failure.

Checks: settings load; the endpoint answers `/health`; an API key is set and accepted (`/props`);
the model and its n_ctx; the tool protocol (native or prompted, and why); the gateway's
`/services`; the broker (when configured); the workspace and the data dir are writable, and nothing
under the data dir is open to other users (finding 11 of issue 36); the OS
sandbox (which case applies: read-only commands run in it, or only what the parser proves harmless
runs without asking); which languages have a language server (`openmono lsp`). With a broker
the agent's hands are the worker's: which workers serve the workspace (its queue, asked with
Celery's `inspect active_queues`), then the workspace is checked by a Bash call the worker runs
(the agent container mounts it read-only on purpose), and the worker's sandbox by a sandboxed one.
Exit code 1 when any check failed.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import click
from openmono_contracts import ToolResult
from openmono_contracts.facts import LOOPBACK, REDIS_PASSWORD_ENV, REDIS_PORT
from openmono_contracts.privatefs import exposed, private_dir
from openmono_contracts.redisauth import ping as redis_ping
from openmono_contracts.sandbox import SandboxPolicy

from openmono.config import (
    ConfigError,
    LLMSettings,
    RunOptions,
    Settings,
    current_environ,
    explain_agent,
)

if TYPE_CHECKING:
    from openmono.llm import ModelInfo, OpenAICompatModel, PromptedTools

TIMEOUT_S = 5.0


@dataclass
class Check:
    name: str
    status: str  # "pass", "fail", "info"
    detail: str

    def line(self) -> str:
        mark = {"pass": "✓", "fail": "✗", "info": "–"}[self.status]
        return f"{mark} {self.name}: {self.detail}"


def _api_key(settings: Settings) -> str | None:
    return settings.llm.api_key.get_secret_value() if settings.llm.api_key else None


async def _endpoint_checks(settings: Settings) -> list[Check]:
    # Imported here: the LLM client and the loop are heavy, and `openmono --help` should be quick.
    import httpx
    from openmono_contracts import gateway as gw
    from openmono_contracts import trust

    from openmono.agent import open_model
    from openmono.llm import AuthError, LLMError

    checks: list[Check] = []
    try:
        model = open_model(settings)
    except LLMError as exc:
        return [Check("endpoint", "fail", str(exc))]
    root = model.inner.root
    anchor = trust.load_anchor(settings.gateway_ca)  # valid: the model above checked it
    async with gw.async_client(anchor=anchor, timeout=TIMEOUT_S) as client:
        try:
            r = await client.get(f"{root}/health")
            ok = r.status_code == 200
            why = "" if ok else " (503 = the model is still loading)" * (r.status_code == 503)
            checks.append(
                Check("endpoint", "pass" if ok else "fail", f"{root}/health → {r.status_code}{why}")
            )
        except httpx.HTTPError as exc:
            why = trust.explain_tls_failure(exc, root, anchor) or f"{root} does not answer: {exc!r}"
            checks.append(Check("endpoint", "fail", why))
            await model.aclose()
            return checks
        if settings.llm.api_key:
            checks.append(Check("api key", "pass", "set"))
        else:
            checks.append(
                Check(
                    "api key",
                    "info",
                    "none set (llm.api_key or LLAMA_API_KEY); fine for an open local server",
                )
            )
        try:
            info = await model.probe()
            checks.append(
                Check("model", "pass", f"{info.label} · n_ctx {info.n_ctx} (from /{info.source})")
            )
            checks.append(_tools_check(model))
            checks.append(_family_check(info, settings.llm))
        except AuthError as exc:
            checks.append(Check("model", "fail", f"the key was refused ({exc.status}): {exc}"))
        except LLMError as exc:
            checks.append(Check("model", "fail", f"/props and /v1/models failed: {exc}"))
        finally:
            await model.aclose()
        gateway = (settings.web.gateway or settings.llm.endpoint).rstrip("/")
        gw_root = gateway.removesuffix("/v1")
        try:
            key = _api_key(settings)
            offered = await gw.read_services(
                client, gw_root, key, timeout_s=TIMEOUT_S, anchor=anchor
            )
        except gw.ServicesUnreadable as exc:
            why = f"{gw_root}: {exc.reason} (not the gateway? web tools use their direct fallback)"
            checks.append(Check("services", "info", why))
        else:
            flags = " ".join(f"{k}={str(v).lower()}" for k, v in offered.model_dump().items())
            checks.append(Check("services", "pass", f"{gw_root}/services: {flags}"))
    return checks


def _family_check(info: ModelInfo, llm: LLMSettings) -> Check:
    """The model family, whose chat template, and which worked examples the model gets."""
    from openmono.llm import MAX_EXAMPLES

    if info.tool_protocol == "prompted":
        examples = (
            f"up to {MAX_EXAMPLES} worked examples in the prompt, chosen by the request's words"
        )
        examples += {
            "narrow": "; a request that only reads is shown no tool that writes (tool_intent)",
        }.get(llm.tool_intent, "")
        if llm.tool_pick == "two_step":
            examples += "; a turn's first request is asked its action first (tool_pick)"
            if llm.tool_ground == "named":
                examples += ", its path one the request names (tool_ground)"
            if llm.tool_repick == "after_read":
                examples += "; a change request that only read is asked again (tool_repick)"
    else:
        examples = "no worked examples (native: the template renders the tools)"
    detail = f"{info.family or 'unknown'} · template: {info.template or 'unknown'} · {examples}"
    return Check("model family", "info", detail)


def _tools_check(model: PromptedTools[OpenAICompatModel]) -> Check:
    """Which tool protocol the probe chose, and why; a model that cannot see its tools fails."""
    choice = model.choice
    if choice is None:
        return Check("tools", "info", f"{model.protocol} (not probed)")
    detail = f"{choice.protocol} · {choice.reason}"
    if choice.protocol == "prompted":
        detail += " · grammar " + ("on" if model.grammar and model.takes_grammar else "off")
    if choice.warning:
        return Check("tools", "fail", f"{detail}: {choice.warning}")
    return Check("tools", "pass", detail)


def _broker_check(settings: Settings) -> Check:
    url = settings.broker_url
    if not url:
        return Check("broker", "info", "none configured: tools run in-process")
    parts = urlsplit(url)
    host, port = parts.hostname or LOOPBACK, parts.port or REDIS_PORT
    password = parts.password or current_environ().get(REDIS_PASSWORD_ENV) or ""
    try:
        reply = redis_ping(host, port, password, TIMEOUT_S)
    except OSError as exc:
        return Check("broker", "fail", f"{host}:{port} unreachable: {exc}")
    if reply.startswith(b"+PONG"):
        if not password:
            return Check("broker", "fail", f"redis at {host}:{port} requires no password")
        return Check("broker", "pass", f"redis at {host}:{port} answers (password required)")
    if reply.startswith((b"-NOAUTH", b"-WRONGPASS", b"-ERR AUTH")):
        return Check(
            "broker", "fail", f"redis at {host}:{port} refuses REDIS_PASSWORD: {_text(reply)}"
        )
    return Check("broker", "fail", f"{host}:{port} is not Redis (answered {reply[:20]!r})")


def _text(reply: bytes) -> str:
    return reply.decode(errors="replace").lstrip("-+")[:120]


def _dir_check(name: str, path: Path, create: bool) -> Check:
    if create:
        try:
            private_dir(path)  # only `data dir` is created: 0700 like everything in it
        except OSError as exc:
            return Check(name, "fail", f"{path}: {exc}")
    if not path.is_dir():
        return Check(name, "fail", f"{path} is not a directory")
    if not os.access(path, os.W_OK):
        return Check(name, "fail", f"{path} is not writable")
    extra = " (git repository)" if name == "workspace" and (path / ".git").exists() else ""
    return Check(name, "pass", f"{path}{extra}")


# Run by the worker in the workspace: prints the marker only when it may write there.
_PROBE = 'test -d . && test -w . && echo "openmono-doctor: writable as uid $(id -u)"'
_WORKER_TIMEOUT_S = 30.0


async def _worker_probe(
    settings: Settings, workspace: Path, command: str, sandbox: SandboxPolicy | None = None
) -> ToolResult | str:
    """A Bash call the worker runs for the doctor; its result, or why there is none."""
    from openmono_contracts.tools import ToolRequest

    from openmono.executor import ExecutorError, select_executor

    try:
        executor = select_executor(settings)
    except ExecutorError as exc:
        return f"no executor for the broker: {exc}"
    request = ToolRequest(
        tool="Bash",
        params={"command": command},
        call_id="doctor-workspace",
        session_id="doctor",
        workspace=str(workspace),
        timeout_s=_WORKER_TIMEOUT_S / 2,
        sandbox=sandbox,
    )
    try:
        return await asyncio.wait_for(executor.run(request), _WORKER_TIMEOUT_S)
    except (TimeoutError, ExecutorError) as exc:
        return f"the worker did not answer a probe: {exc!r}"
    finally:
        await executor.aclose()


async def _worker_workspace_check(settings: Settings, workspace: Path) -> Check:
    result = await _worker_probe(settings, workspace, _PROBE)
    if isinstance(result, str):
        return Check("workspace", "fail", result)
    line = next((x for x in result.output.splitlines() if "openmono-doctor:" in x), "")
    if result.ok and line:
        detail = line.split(":", 1)[1].strip()
        return Check("workspace", "pass", f"{workspace} in the worker ({detail})")
    why = result.error or result.output.strip()[:200] or "not writable"
    return Check("workspace", "fail", f"{workspace} in the worker: {why}")


async def _workers_check(settings: Settings, workspace: Path) -> Check:
    # Which workers consume this workspace's queue (docs/worker.md "Several workers").
    from openmono.executor.celery import route_report

    url = settings.broker_url or ""
    ok, detail = await route_report(url, workspace)
    return Check("workers", "pass" if ok else "fail", detail)


def _sandbox_check(settings: Settings) -> Check:
    """Which case applies: read-only commands run in the OS sandbox, or only what the shell
    parser proves harmless runs without asking (docs/security.md)."""
    from openmono_worker import sandbox_support

    found = sandbox_support()
    if not found.available:
        return Check(
            "sandbox",
            "info",
            f"unavailable ({found.reason}): only commands the shell parser proves harmless run "
            "without asking (no git, every path inside the workspace)",
        )
    detail = f"{found.describe()}: read-only commands run in it without asking"
    if settings.permissions.sandbox:
        detail += "; approved ones too, the workspace writable (permissions.sandbox)"
    return Check("sandbox", "pass", detail)


async def _worker_sandbox_check(settings: Settings, workspace: Path) -> Check:
    result = await _worker_probe(settings, workspace, "true", sandbox="read_only")
    if isinstance(result, str):
        return Check("sandbox", "fail", result)
    if result.ok:
        return Check("sandbox", "pass", "the worker runs sandboxed calls in its sandbox")
    return Check(
        "sandbox",
        "fail",
        f"the worker refuses sandboxed calls, which this agent sends for read-only commands: "
        f"{result.error}",
    )


def run_checks(opts: RunOptions) -> list[Check]:
    env = current_environ()
    try:
        settings, rows = explain_agent(env, opts.workspace, opts.config, opts.overrides())
    except ConfigError as exc:
        return [Check("settings", "fail", str(exc))]
    origin = next((r.origin for r in rows if r.key == "llm.endpoint"), "default")
    where = f"env file {env.file_path}" if env.file_path else "no env file"
    detail = f"endpoint {settings.llm.endpoint} ({origin}); {where} (`openmono config show`)"
    checks = [Check("settings", "pass", detail)]
    checks += asyncio.run(_endpoint_checks(settings))
    broker = _broker_check(settings)
    checks.append(broker)
    workspace = opts.workspace_dir(settings)
    served = False
    if broker.status == "pass":
        workers = asyncio.run(_workers_check(settings, workspace))
        checks.append(workers)
        served = workers.status == "pass"
        if served:
            checks.append(asyncio.run(_worker_workspace_check(settings, workspace)))
    else:
        checks.append(_dir_check("workspace", workspace, create=False))
    sandbox = _sandbox_check(settings)
    checks.append(sandbox)
    if sandbox.status == "pass" and served:
        checks.append(asyncio.run(_worker_sandbox_check(settings, workspace)))
    checks.append(_dir_check("data dir", settings.data_dir, create=True))
    checks.append(_private_check(settings.data_dir))
    checks.append(_servers_check(settings.data_dir, served))
    checks.append(_trust_check(workspace))
    return checks


def _private_check(data_dir: Path) -> Check:
    """Whether anything under the data dir (sessions, artifacts, logs) is open to other users."""
    found, total = exposed(data_dir, limit=3)
    if not total:
        return Check("data dir access", "pass", f"{data_dir}: its owner's alone (0700/0600)")
    shown = ", ".join(str(p) for p in found) + (", …" if total > len(found) else "")
    if data_dir not in found:
        # a closed data dir cannot be entered: what is inside is out of reach whatever its mode
        return Check(
            "data dir access",
            "pass",
            f"{data_dir} is 0700: nobody else reaches the {total} path(s) in it that carry "
            f"group/other bits ({shown})",
        )
    return Check(
        "data dir access",
        "fail",
        f"{total} path(s) open to group/others ({shown}): sessions, artifacts and logs are "
        f"readable. `chmod -R go= {data_dir}`, the next session or `openmono up` closes them",
    )


def servers_line(data_dir: Path) -> str:
    """Which languages have a language server here, and how to add the missing ones."""
    from openmono_worker import LANGUAGES, for_language

    have, missing = [], []
    for lang in LANGUAGES:
        exe = lang.executable(data_dir)
        if exe is not None:
            have.append(f"{lang.id} ({Path(exe).name})")
        else:
            item = for_language(lang.id)
            missing.append(f"{lang.id} (`openmono lsp install {item.name}`)" if item else lang.id)
    return (
        f"{', '.join(have) or 'none'}; none for {', '.join(missing)}"
        if missing
        else ", ".join(have)
    )


def _servers_check(data_dir: Path, served: bool) -> Check:
    # with a worker the tools run there: its servers are the ones that count, not this machine's
    where = " (this machine's; the worker has its own)" if served else ""
    return Check("language servers", "info", servers_line(data_dir) + where)


def _trust_check(workspace: Path) -> Check:
    from openmono.agent import trust_question
    from openmono.config import workspace_trusted

    if workspace_trusted(workspace):
        return Check("trust", "pass", f"{workspace} is trusted: what it brings applies")
    question = trust_question(workspace, even_if_answered=True)
    if question is None:
        return Check("trust", "info", f"{workspace} is not trusted; nothing in it waits for trust")
    return Check("trust", "info", question.left_out())


@click.command()
@click.pass_context
def doctor(ctx: click.Context) -> None:
    """Check the endpoint, key, model, gateway services, broker and workspace."""
    checks = run_checks(ctx.obj)
    for check in checks:
        click.echo(check.line())
    failed = [c for c in checks if c.status == "fail"]
    click.echo(f"\n{len(failed)} problem(s) found" if failed else "\nall checks passed")
    ctx.exit(1 if failed else 0)
