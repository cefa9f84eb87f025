"""Bash: run a shell command in the workspace (`bash -c`), in its own process group.

Foreground: the call returns when the command ends, at its timeout (`timeout_ms`, capped by the
call's `timeout_s`), or when the executor cancels it; in every case everything the command
started is SIGKILLed before we return, even what moved to a session of its own (`_shell`: the
command runs under a subreaper), so nothing keeps running (`background: true` is for servers).

Every command runs under the worker's rlimits (`WORKER_LIMITS_*`: CPU time, file size,
processes). A request that asks for a sandbox (`ToolRequest.sandbox`: the agent auto-allowed a
read-only command, or `permissions.sandbox` is on) runs in it (`openmono_worker.sandbox`), with
the environment the sandbox gives; a worker that cannot make one refuses the call.
Output is stdout and stderr interleaved, capped (head and tail kept); the exit code ends the output.
A non-zero exit, a timeout or a cancellation is `ok=False`, with the output still attached.

Background: the command starts detached in its own session under a keeper (`_jobs`), its output
appended to `<data dir>/bash/<session_id>/<call_id>.log`; the call returns the pid and the log path
at once. Stop it with `kill -- -PID` (the pid is also the process group id). When it ends, its exit
status is the log's last line and `<call_id>.status.json` beside it, whoever asks and however late.

Every call starts in the workspace root (no cwd carried over between calls). The environment is
the user's (`openmono_contracts.userenv`: never OpenMono's own virtual environment, so `python`
is theirs), minus OpenMono's own settings and secrets (`OPENMONO_*`, `WORKER_*`, every name in
`facts.SECRET_NAMES`), with pagers disabled and git told never to prompt, since nothing can answer
on stdin.
"""

from __future__ import annotations

from dataclasses import replace

from openmono_contracts.facts import SECRET_NAMES
from openmono_contracts.userenv import user_environment
from pydantic import BaseModel, ConfigDict, Field

from openmono_worker.artifacts import safe_name
from openmono_worker.errors import ToolError
from openmono_worker.sandbox import (
    Confinement,
    Limits,
    SandboxedCall,
    SandboxUnavailable,
    SpawnFailed,
    Where,
)
from openmono_worker.sandbox import prepare as prepare_sandbox
from openmono_worker.settings import WorkerSettings
from openmono_worker.tools._base import Tool, ToolContext, ToolOutcome
from openmono_worker.tools._jobs import start_job
from openmono_worker.tools._shell import run_shell

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
_HIDDEN_PREFIXES = ("OPENMONO_", "WORKER_")


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, description="The command line, run with `bash -c`.")
    timeout_ms: int | None = Field(
        default=None,
        ge=1,
        le=MAX_TIMEOUT_MS,
        description=f"Kill the command after this many ms (default {DEFAULT_TIMEOUT_MS}).",
    )
    background: bool = Field(
        default=False,
        description="Start detached (servers, watchers); returns the pid and a log file path.",
    )


def command_env() -> dict[str, str]:
    """The environment commands run with (see the module docstring)."""
    env = {
        k: v
        for k, v in user_environment().items()
        if not k.startswith(_HIDDEN_PREFIXES) and k not in SECRET_NAMES
    }
    env.update({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    return env


def command_limits(settings: WorkerSettings) -> Limits:
    """The rlimits of every command (`WORKER_LIMITS_*`)."""
    limits = settings.limits
    return Limits(limits.cpu_s, limits.file_mb * 1024 * 1024, limits.processes)


def sandbox_where(settings: WorkerSettings) -> Where:
    """What the sandbox's view is built from, besides the workspace."""
    return Where(
        data_dir=settings.data_dir,
        env_file=settings.env_file,
        extra_read=tuple(settings.sandbox.read_paths),
        extra_hidden=tuple(settings.sandbox.hidden_paths),
    )


def confine(ctx: ToolContext, env: dict[str, str]) -> tuple[Confinement, SandboxedCall | None]:
    """The confinement of this call's command, and its sandbox when the request asks for one."""
    limits = command_limits(ctx.settings)
    if ctx.sandbox is None:
        return Confinement(limits), None
    sandboxed = prepare_sandbox(
        ctx.sandbox,
        ctx.workspace,
        sandbox_where(ctx.settings),
        limits=limits,
        path_value=env.get("PATH", ""),
        call_id=safe_name(ctx.call_id),
    )
    return sandboxed.confinement, sandboxed


class Bash(Tool[Params]):
    name = "Bash"
    description = (
        "Run a shell command (bash -c) in the workspace root and return its combined stdout/stderr "
        "and exit code. The command is killed with everything it started at the timeout; use "
        "background=true for servers and watchers (output goes to a log file)."
    )
    shell_param = "command"
    core = True
    kind = "execute"
    params_model = Params

    def execute(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        if params.background:
            return self._background(params, ctx)
        wanted_s = (params.timeout_ms or DEFAULT_TIMEOUT_MS) / 1000.0
        timeout_s = min(wanted_s, ctx.timeout_s)
        env = command_env()
        confinement, sandboxed = confine(ctx, env)
        try:
            done = run_shell(
                params.command,
                cwd=ctx.workspace,
                timeout_s=timeout_s,
                cancel=ctx.cancel,
                max_bytes=ctx.settings.bash_max_output_bytes,
                env=sandboxed.env(env) if sandboxed else env,
                confinement=confinement,
            )
        except SpawnFailed as exc:
            if sandboxed is not None:
                raise SandboxUnavailable(f"entering it failed ({exc})") from exc
            raise ToolError(f"the command could not be started under its limits ({exc})") from exc
        finally:
            if sandboxed is not None:
                sandboxed.close()
        body = done.stdout.text()
        if body.endswith("\n"):
            body = body[:-1]
        parts = [body] if body else ["(no output)"]
        capped = done.stdout.dropped > 0
        if done.cancelled:
            parts.append("[cancelled: the command and everything it started were killed]")
            return ToolOutcome(
                "\n".join(parts),
                ok=False,
                error="cancelled",
                error_kind="cancelled",
                truncated=capped,
            )
        if done.timed_out:
            parts.append(
                f"[timed out after {timeout_s:g} s: the command and everything it started were "
                "killed; for long-running work use background=true]"
            )
            error = f"command timed out after {timeout_s:g} s"
            return ToolOutcome(
                "\n".join(parts), ok=False, error=error, error_kind="timeout", truncated=capped
            )
        if done.exit_code is None:
            parts.append("[the shell running the command was killed]")
            error = "command failed (the shell running it was killed)"
            return ToolOutcome("\n".join(parts), ok=False, error=error, truncated=capped)
        code = done.exit_code
        parts.append(f"[exit code {code}]")
        text = "\n".join(parts)
        if code != 0:
            reason = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
            if 128 < code <= 128 + 64:
                reason += f" = 128 + signal {code - 128}"
            return ToolOutcome(text, ok=False, error=f"command failed ({reason})", truncated=capped)
        return ToolOutcome(text, truncated=capped)

    def _background(self, params: Params, ctx: ToolContext) -> ToolOutcome:
        log = (
            ctx.settings.bash_log_dir / safe_name(ctx.session_id) / f"{safe_name(ctx.call_id)}.log"
        )
        env = command_env()
        confinement, sandboxed = confine(ctx, env)
        try:
            job = start_job(
                ["bash", "-c", params.command],
                cwd=ctx.workspace,
                log=log,
                env=sandboxed.env(env) if sandboxed else env,
                confinement=replace(confinement, subreaper=False),
            )
        finally:
            if sandboxed is not None:
                sandboxed.confinement.close()  # the keeper holds its own copy
        return ToolOutcome(
            f"started in the background: pid {job.pid} (also its process group)\n"
            f"log: {log}\n"
            f"read the log with FileRead or `tail {log}`; stop it with `kill -- -{job.pid}`\n"
            f"when it ends, its exit status is the log's last line and in {job.status}",
            artifact=str(log),
        )


TOOL = Bash()
