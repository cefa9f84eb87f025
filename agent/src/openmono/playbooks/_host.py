"""What a playbook run borrows from the session it runs in, and the gates a surface supplies.

`Host`: the session's dispatcher (tools, permissions, approver, hooks), its model,
loop options and mode, where transcripts and checkpoints go. From it a run builds each step's
`Dispatcher`: the session's tools narrowed to `allowed-tools` (the model is offered only those) and
a first pipeline step that refuses any other name, so a call the model makes up is refused with a
reason, whatever the catalog holds. `Agent` and `Playbook` are never offered inside a playbook: a
sub-agent or a nested playbook would escape the allow-list.

Shell: `{{shell:...}}` and a step's `script` run as `Bash` requests on the session's tools,
so they run where the workspace is (in-process or on a Celery worker), in their own process group,
killed at their timeout. Running a playbook is the user's consent to run its own scripts; the
`Playbook` tool the model calls asks the user first (its facts say `permission="ask"`).

Gates: a `Gate` is an async callable, `GateRequest -> bool` (pass or stop); `approve_all` is
`--yes`, `no_gate` a non-interactive run (it raises `GateUnavailable`), `gate_from_approver` asks
through a permission approver (the REPL's prompt, ACP's `session/request_permission`).
"""

from __future__ import annotations

import secrets
import shlex
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

from openmono.llm import Model
from openmono.loop import (
    PREPARE_STEPS,
    AgentLoop,
    Dispatcher,
    LoopOptions,
    Pending,
    Refusal,
    Step,
    StepContext,
)
from openmono.permissions import Approver, Mode, PermissionRequest
from openmono.playbooks._errors import GateUnavailable, TemplateError
from openmono.playbooks._model import GateKind
from openmono.playbooks._template import shown

NESTED = ("Agent", "Playbook")
SHELL_TIMEOUT_MS = 60_000
SCRIPT_TIMEOUT_MS = 300_000
MAX_SHELL_CHARS = 20_000
_SCRIPT_END = "__OPENMONO_PLAYBOOK_SCRIPT__"


@dataclass(frozen=True)
class GateRequest:
    """What a surface shows at a gate: before a step (Confirm, Approve) or after it (Review)."""

    playbook: str
    step: str
    kind: GateKind
    phase: Literal["before", "after"]
    text: str


Gate = Callable[[GateRequest], Awaitable[bool]]


async def approve_all(_request: GateRequest) -> bool:
    """`--yes`: every gate passes."""
    return True


async def no_gate(request: GateRequest) -> bool:
    """A non-interactive run: a gate stops it with a message that says how to go on."""
    raise GateUnavailable(
        f"step {request.step!r} of playbook {request.playbook!r} has a {request.kind} gate and "
        "this run is non-interactive: pass --yes to pass every gate (or run it interactively); "
        "--resume continues from this step"
    )


def gate_from_approver(approver: Approver | None) -> Gate:
    """A gate that asks through a permission approver; allowed once or for the session = pass."""
    if approver is None:
        return no_gate
    ask = approver

    async def gate(request: GateRequest) -> bool:
        where = "before" if request.phase == "before" else "after"
        answer = await ask(
            PermissionRequest(
                call_id=f"gate-{request.step}-{secrets.token_hex(3)}",
                tool="Playbook",
                arguments={
                    "playbook": request.playbook, "step": request.step, "gate": request.kind,
                    "text": request.text,
                },
                reason=f"{request.kind} gate {where} step {request.step!r} of {request.playbook}",
                session_pattern=request.playbook,
            )
        )  # fmt: skip
        return answer in ("once", "session")

    return gate


def allowed(patterns: list[str], tool: str) -> bool:
    return tool not in NESTED and any(fnmatchcase(tool, p) for p in patterns)


def _only(patterns: list[str], playbook: str) -> Step:
    async def check(_c: StepContext, p: Pending) -> Refusal | None:
        if allowed(patterns, p.call.name):
            return None
        return Refusal(
            f"the playbook {playbook!r} does not allow the tool {p.call.name!r} "
            f"(allowed-tools: {', '.join(patterns)})",
            denied=True,
        )

    return Step("playbook_tools", check)


@dataclass
class Host:
    """The session a run borrows from (see the module docstring)."""

    dispatcher: Dispatcher
    model: Callable[[], Model]
    options: LoopOptions
    mode: Callable[[], Mode]
    transcripts: Path
    data_dir: Path

    @classmethod
    def of(cls, loop: AgentLoop, session_dir: Path, data_dir: Path) -> Host:
        """The host for runs inside the session of `loop`, whose files are in `session_dir`
        (`<data>/sessions/<id>/`: transcripts go beside its sub-agents')."""
        return cls(
            dispatcher=loop.dispatcher,
            model=lambda: loop.model,
            options=loop.options,
            mode=lambda: loop.mode,
            transcripts=session_dir / "playbooks",
            data_dir=data_dir,
        )

    @property
    def workspace(self) -> Path:
        return self.dispatcher.ctx.workspace

    def step_dispatcher(self, patterns: list[str], playbook: str) -> Dispatcher:
        parent = self.dispatcher
        return parent.derive(
            parent.catalog.narrowed(lambda name, _facts: allowed(patterns, name)),
            approver=parent.approver,
            steps=(_only(patterns, playbook), *PREPARE_STEPS),
        )

    async def shell(
        self, command: str, *, timeout_ms: int = SHELL_TIMEOUT_MS, what: str | None = None
    ) -> str:
        """stdout+stderr of `command` run in the workspace; a failure is a `TemplateError`."""
        ctx = self.dispatcher.ctx
        request = ctx.request(
            f"playbook-shell-{secrets.token_hex(4)}",
            "Bash",
            {"command": command, "timeout_ms": timeout_ms},
            timeout_s=max(ctx.timeout_s, timeout_ms / 1000),
        )
        result = await self.dispatcher.call(request)
        lines = result.output.rstrip("\n").splitlines()
        if lines and lines[-1].startswith("[exit code"):
            lines.pop()
        text = "\n".join(lines)
        if text == "(no output)":
            text = ""
        label = what or f"{{{{shell:{command}}}}}"
        if not result.ok:
            tail = text[-2000:]
            raise TemplateError(f"{label} failed: {result.error or 'error'}\n{tail}".rstrip())
        if len(text) > MAX_SHELL_CHARS:
            text = text[:MAX_SHELL_CHARS] + "\n[... output cut]"
        return text

    async def script(self, path: Path, parameters: Mapping[str, Any]) -> str:
        """Run a playbook's script (its shebang's interpreter, else bash) fed on stdin, with
        each parameter in the environment as `PLAYBOOK_<NAME>`."""
        content = path.read_text(encoding="utf-8")  # noqa: ASYNC240 (a small local file)
        first = content.splitlines()[0] if content else ""
        interpreter = first[2:].strip() if first.startswith("#!") else "bash"
        env = " ".join(
            f"PLAYBOOK_{_env_name(k)}={shlex.quote(_env_value(v))}" for k, v in parameters.items()
        )
        command = f"{env} {interpreter} - <<'{_SCRIPT_END}'\n{content.rstrip()}\n{_SCRIPT_END}"
        return await self.shell(
            command.strip(), timeout_ms=SCRIPT_TIMEOUT_MS, what=f"script {path.name}"
        )


def _env_name(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name).upper()


def _env_value(value: Any) -> str:
    return shown(value)
