"""Run a playbook: its steps in dependency order, each a turn of a loop narrowed to its tools.

One run:
    1. start     -- parameters resolved and checked (or, with `resume`, the checkpoint loaded:
                    same playbook, same version, parameters still valid); the body is rendered
                    once into the system prompt
    2. per step  -- skip it if the checkpoint has it; render its prompt (+ its script's output,
                    + the constraints unless the prompt places `{{constraints}}` itself)
    3. gate      -- Confirm / Approve: the rendered step is shown first; a "no" stops the run
    4. turn      -- the step is one user turn of the loop (`context-mode: shared` keeps one
                    conversation for every step, `isolated` starts each step afresh)
    5. output    -- the final answer, validated against `output-schema` with one correction
                    turn (`_structured`); Review: the answer is shown and must be accepted
    6. state     -- the output goes into state (`output: KEY`), the step is marked done, the
                    checkpoint is written atomically
A stop (a denied gate, a failed step, a gate nobody can answer, Ctrl-C) leaves the checkpoint at
the last completed step, so `--resume` goes on from there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from openmono.llm import LLMError
from openmono.loop import (
    AgentLoop,
    Conversation,
    EventSink,
    LoopEvent,
    LoopOptions,
    Notice,
    TurnDone,
    discard,
)
from openmono.playbooks import _checkpoint, _structured
from openmono.playbooks._checkpoint import RunState, RunStatus
from openmono.playbooks._errors import GateUnavailable, PlaybookError, ResumeError, TemplateError
from openmono.playbooks._host import Gate, GateRequest, Host
from openmono.playbooks._load import Playbook
from openmono.playbooks._model import Step
from openmono.playbooks._params import resolve_parameters
from openmono.playbooks._template import render, scan
from openmono.sessions import SessionHeader, SessionWriter

RESUME_NOTE_CHARS = 600


@dataclass
class RunResult:
    """How a run ended; `run` is the checkpoint as last written."""

    status: RunStatus
    run: RunState
    checkpoint: Path
    message: str

    @property
    def ok(self) -> bool:
        return self.status == "done"


class _Stop(PlaybookError):
    def __init__(self, status: RunStatus, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _no_done(emit: EventSink) -> EventSink:
    """A step's events for the surface, without its `TurnDone` (the run is not over)."""

    def relay(event: LoopEvent) -> None:
        if not isinstance(event, TurnDone):
            emit(event)

    return relay


class PlaybookRunner:
    """Runs one playbook in one session (see the module docstring)."""

    def __init__(
        self, playbook: Playbook, host: Host, gate: Gate, emit: EventSink = discard
    ) -> None:
        self.playbook = playbook
        self.host = host
        self.gate = gate
        self.emit = emit
        self.checkpoint = _checkpoint.checkpoint_path(host.data_dir, host.workspace, playbook.name)
        self._loop: AgentLoop | None = None
        self._writer: SessionWriter | None = None

    # -- 1. start ---------------------------------------------------------------------------------
    def _start(self, given: Mapping[str, Any] | None, resume: bool) -> RunState:
        pb = self.playbook
        if not resume:
            values = resolve_parameters(pb.file, pb.front.parameters, given or {})
            return RunState(
                playbook=pb.name, version=pb.front.version, source=pb.source,
                workspace=str(self.host.workspace), parameters=values,
            )  # fmt: skip
        run = _checkpoint.load(self.checkpoint)
        if run.playbook != pb.name:
            raise ResumeError(f"the checkpoint {self.checkpoint} is for {run.playbook!r}")
        if run.status == "done":
            raise ResumeError(f"the last run of {pb.name!r} finished: nothing to resume")
        if run.version != pb.front.version:
            raise ResumeError(
                f"the checkpoint is from {pb.name} {run.version}, the playbook is now "
                f"{pb.front.version}: run it again without --resume"
            )
        if given and any(run.parameters.get(k) != v for k, v in given.items()):
            raise ResumeError("--resume keeps the parameters of the run it continues")
        run.parameters = resolve_parameters(pb.file, pb.front.parameters, run.parameters)
        run.status, run.error, run.stopped_at = "running", None, None
        return run

    async def run(
        self, parameters: Mapping[str, Any] | None = None, *, resume: bool = False
    ) -> RunResult:
        """Run (or resume) to the end or to the first stop; never raises for a stop."""
        run = self._start(parameters, resume)
        self._save(run)
        total = len(self.playbook.order)
        pb = self.playbook
        verb = "resuming" if resume else "running"
        self._note(
            f"{verb} {pb.name} {pb.front.version} from the {pb.source} playbooks ({pb.file})"
        )
        for hidden in pb.shadows:
            self._note(
                f"the {pb.source} playbook {pb.name} ({pb.file}) shadows the {hidden.source} "
                f"one of that name ({hidden.file}): it runs instead",
                "warning",
            )
        try:
            system = await self._system(run)
            for index, step in enumerate(self.playbook.order, 1):
                if step.id in run.completed:
                    continue
                run.stopped_at = step.id
                self._note(f"step {index}/{total}: {step.id}")
                await self._step(run, step, system)
                run.completed.append(step.id)
                run.stopped_at = None
                self._save(run)
        except _Stop as stop:
            return self._end(run, stop.status, stop.message)
        except (TemplateError, GateUnavailable) as exc:
            return self._end(
                run, "stopped" if isinstance(exc, GateUnavailable) else "failed", str(exc)
            )
        except asyncio.CancelledError:
            self._end(run, "stopped", "interrupted")
            raise
        finally:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
        return self._end(run, "done", f"playbook {self.playbook.name} finished ({total} steps)")

    def _end(self, run: RunState, status: RunStatus, message: str) -> RunResult:
        run.status = status
        run.error = None if status == "done" else message
        self._save(run)
        if status != "done":
            where = f" at step {run.stopped_at!r}" if run.stopped_at else ""
            message = f"{message}{where} (checkpoint: {self.checkpoint})"
        self._note(message, "info" if status == "done" else "warning")
        return RunResult(status, run, self.checkpoint, message)

    def _save(self, run: RunState) -> None:
        _checkpoint.save(self.checkpoint, run)

    def _note(self, message: str, level: Literal["info", "warning"] = "info") -> None:
        self.emit(Notice(level=level, message=f"[playbook {self.playbook.name}] {message}"))

    async def _render(self, text: str, run: RunState) -> str:
        return await render(
            text, parameters=run.parameters, state=run.state,
            constraints=self.playbook.constraints, shell=self.host.shell,
        )  # fmt: skip

    async def _system(self, run: RunState) -> str:
        pb = self.playbook
        body = await self._render(pb.body, run) if pb.body else ""
        tools = ", ".join(pb.front.allowed_tools)
        about = pb.front.description or "no description"
        footer = (
            f"# Playbook run\nYou are running the playbook {pb.name!r} ({about}) in the project "
            f"at {self.host.workspace}, one step at a time. Each user message is one step: do "
            "what it asks with the tools, then reply with the step's result. "
            f"Allowed tools: {tools}."
        )
        return f"{body}\n\n{footer}" if body else footer

    # -- 2.-6. one step ---------------------------------------------------------------------------
    async def _prompt(self, run: RunState, step: Step) -> str:
        pb = self.playbook
        raw = pb.prompts[step.id]
        text = await self._render(raw, run)
        if step.id in pb.scripts:
            out = await self.host.script(pb.scripts[step.id], run.parameters)
            text += f"\n\nOutput of the script {pb.scripts[step.id].name}:\n```\n{out}\n```"
        if pb.constraints and not any(p.kind == "constraints" for p in scan(raw)):
            text += f"\n\nConstraints (always apply):\n{pb.constraints}"
        return text

    def _step_loop(self, run: RunState, system: str) -> AgentLoop:
        if self._loop is not None and self.playbook.front.context_mode == "shared":
            return self._loop
        host = self.host
        if self._writer is None:
            header = SessionHeader(
                working_directory=str(host.workspace), mode=host.mode(),
                parent_session=host.dispatcher.ctx.session_id, playbook=self.playbook.name,
                playbook_run=run.run_id,
            )  # fmt: skip
            self._writer = SessionWriter(host.transcripts / f"{header.session_id}.jsonl", header)
            run.transcript = str(self._writer.path)
        options = LoopOptions(
            max_iterations=host.options.max_iterations, n_ctx=host.options.n_ctx,
            max_tokens=host.options.max_tokens, temperature=host.options.temperature,
        )  # fmt: skip
        self._loop = AgentLoop(
            host.model(),
            host.step_dispatcher(self.playbook.front.allowed_tools, self.playbook.name),
            Conversation(system=system, writer=self._writer),
            options=options,
            mode=host.mode(),
        )
        return self._loop

    async def _ask(self, step: Step, phase: Literal["before", "after"], text: str) -> None:
        request = GateRequest(self.playbook.name, step.id, step.gate, phase, text)
        self._note(f"{step.gate} gate {phase} step {step.id!r}")
        if not await self.gate(request):
            raise _Stop("denied", f"the {step.gate} gate of step {step.id!r} was denied")

    async def _step(self, run: RunState, step: Step, system: str) -> None:
        prompt = await self._prompt(run, step)
        if not self._loop and run.completed and self.playbook.front.context_mode == "shared":
            prompt = self._resume_note(run) + prompt
        if step.gate in ("Confirm", "Approve"):
            await self._ask(step, "before", prompt)
        loop = self._step_loop(run, system)
        done = await loop.run_turn(prompt, _no_done(self.emit))
        if not done.ok:
            raise _Stop(
                "failed", f"step {step.id!r} stopped: {done.reason} ({done.error or 'no detail'})"
            )
        value: Any = done.text
        schema = self.playbook.schemas.get(step.id)
        if schema is not None:
            value = await self._structured(loop, step, schema, done.text)
        if step.gate == "Review":
            await self._ask(step, "after", f"{prompt}\n\n--- answer ---\n{done.text}")
        run.outputs[step.id] = done.text
        if step.output:
            run.state[step.output] = value

    async def _structured(
        self, loop: AgentLoop, step: Step, schema: dict[str, Any], text: str
    ) -> Any:
        value, found = _structured.problems(schema, text)
        if not found:
            return value
        self._note(
            f"step {step.id!r}: the answer does not match its output-schema; asking once more"
        )
        try:
            fixed = await _structured.correct(
                loop.model, loop.conv, step.id, schema, found, _no_done(self.emit),
                max_tokens=loop.options.max_tokens,
            )  # fmt: skip
        except LLMError as exc:
            raise _Stop("failed", f"step {step.id!r}: the correction turn failed: {exc}") from None
        value, found = _structured.problems(schema, fixed)
        if found:
            raise _Stop(
                "failed",
                f"step {step.id!r}: the answer does not match its output-schema, even after the "
                f"correction: {'; '.join(found)}",
            )
        return value

    def _resume_note(self, run: RunState) -> str:
        done = []
        for step_id in run.completed:
            out = run.outputs.get(step_id, "")
            if len(out) > RESUME_NOTE_CHARS:
                out = out[:RESUME_NOTE_CHARS] + " [...]"
            done.append(f"- {step_id}: {out}")
        return (
            "(This run was resumed. Steps done earlier, with their results:\n"
            + "\n".join(done)
            + ")\n\n"
        )
