"""The hook runner: picks the hooks an event matches and turns what they did into decisions.

Events and their payload (JSON on stdin; `event`, `session_id` and `workspace` always present;
tool events also set `OPENMONO_TOOL_NAME` and `OPENMONO_TOOL_INPUT` in the environment):
    session_start  -- once, when a session is opened or resumed
    pre_tool_use   -- `tool`, `input`, `call_id`; after the permission engine allowed the call
    post_tool_use  -- the same plus `result` {ok, output, error}
    stop           -- `reason`, `text`: after every turn
Tool hooks are matched by `matcher` (a regex over the whole tool name; `*` is every tool) and by
`input` (a substring of the call's JSON arguments, or `re:REGEX` searched in them).

Outcomes. Exit 0: fine; stdout may be empty or a JSON object, where `{"decision": "block",
"reason": ...}` blocks a pre_tool_use call and `reason` / `additional_context` of a post_tool_use
hook is passed to the model. Exit 2: pre_tool_use blocks the call with the hook's stderr as the
reason; post_tool_use passes its stderr to the model. Anything else (another exit code, a timeout,
stdout that is not a JSON object) is a failed hook: a pre_tool_use call fails closed (blocked, and
the reason says which hook failed how); other events report it and carry on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmono_contracts import ToolRequest, ToolResult

from openmono.config import HookCommand, HookSettings
from openmono.hooks._errors import HookError
from openmono.hooks._process import HookRun, run_hook

log = logging.getLogger("openmono.hooks")
RESULT_PREVIEW = 4000


@dataclass(frozen=True)
class _Compiled:
    spec: HookCommand
    name: re.Pattern[str] | None
    pattern: re.Pattern[str] | None
    substring: str | None

    def matches(self, tool: str, args: dict[str, Any]) -> bool:
        if self.name is not None and not self.name.fullmatch(tool):
            return False
        if self.pattern is None and self.substring is None:
            return True
        text = json.dumps(args, ensure_ascii=False, sort_keys=True)
        if self.pattern is not None:
            return self.pattern.search(text) is not None
        return self.substring is not None and self.substring in text


def _compile(spec: HookCommand) -> _Compiled:
    try:
        name = None if spec.matcher in ("", "*") else re.compile(spec.matcher)
        pattern, substring = None, None
        if spec.input is not None and spec.input.startswith("re:"):
            pattern = re.compile(spec.input[3:])
        elif spec.input:
            substring = spec.input
    except re.error as exc:
        raise HookError(f"hook {spec.command!r}: bad regex: {exc}") from exc
    return _Compiled(spec, name, pattern, substring)


def _decision(run: HookRun) -> tuple[dict[str, Any] | None, str | None]:
    """The hook's JSON object (or None when it printed nothing) and why it failed, if it did."""
    if run.failure:
        return None, run.failure
    if run.exit_code not in (0, 2):
        detail = run.stderr.strip() or run.stdout.strip() or "no output"
        return None, f"exited with {run.exit_code}: {detail[:500]}"
    text = run.stdout.strip()
    if run.exit_code == 2 or not text:
        return None, None
    try:
        data = json.loads(text)
    except ValueError:
        return None, f"printed output that is not JSON: {text[:200]!r}"
    if not isinstance(data, dict):
        return None, f"printed JSON that is not an object: {text[:200]!r}"
    return data, None


class HookRunner:
    """Runs the configured hooks of one session (see the module docstring)."""

    def __init__(self, settings: HookSettings, workspace: Path, session_id: str) -> None:
        self.workspace = workspace
        self.session_id = session_id
        self._hooks = {
            "session_start": [_compile(h) for h in settings.session_start],
            "pre_tool_use": [_compile(h) for h in settings.pre_tool_use],
            "post_tool_use": [_compile(h) for h in settings.post_tool_use],
            "stop": [_compile(h) for h in settings.stop],
        }

    def __bool__(self) -> bool:
        return any(self._hooks.values())

    def _payload(self, event: str, **extra: Any) -> dict[str, Any]:
        return {
            "event": event,
            "session_id": self.session_id,
            "workspace": str(self.workspace),
            **extra,
        }

    async def _run_all(self, event: str, hooks: Sequence[_Compiled], **extra: Any) -> list[HookRun]:
        payload = self._payload(event, **extra)
        env = {
            "OPENMONO_HOOK_EVENT": event,
            "OPENMONO_SESSION_ID": self.session_id,
            "OPENMONO_WORKSPACE": str(self.workspace),
        }
        if "tool" in extra:
            # What the .NET format's {{tool_name}} / {{tool_input}} become (config._dotnet_hooks).
            env["OPENMONO_TOOL_NAME"] = str(extra["tool"])
            env["OPENMONO_TOOL_INPUT"] = json.dumps(extra.get("input", {}), ensure_ascii=False)
        return list(
            await asyncio.gather(
                *(
                    run_hook(
                        h.spec.command,
                        payload,
                        timeout_s=h.spec.timeout_s,
                        cwd=self.workspace,
                        env=env,
                    )
                    for h in hooks
                )
            )
        )

    def _matching(self, event: str, tool: str, args: dict[str, Any]) -> list[_Compiled]:
        return [h for h in self._hooks[event] if h.matches(tool, args)]

    async def pre_tool_use(self, request: ToolRequest) -> str | None:
        """Why the call must not run, or None; a failed hook blocks (fails closed)."""
        hooks = self._matching("pre_tool_use", request.tool, request.params)
        if not hooks:
            return None
        runs = await self._run_all(
            "pre_tool_use", hooks, tool=request.tool, input=request.params, call_id=request.call_id
        )
        for run in runs:
            if run.blocked:
                return run.stderr.strip() or f"hook {run.command!r} refused the call (exit 2)"
            data, failure = _decision(run)
            if failure:
                log.warning("pre_tool_use hook %r failed: %s", run.command, failure)
                return f"the hook {run.command!r} failed ({failure}), so the call was not run"
            if data and data.get("decision") == "block":
                return str(data.get("reason") or f"hook {run.command!r} blocked the call")
        return None

    async def post_tool_use(self, request: ToolRequest, result: ToolResult) -> str | None:
        """A note for the model (what the hooks said, or how they failed), or None."""
        hooks = self._matching("post_tool_use", request.tool, request.params)
        if not hooks:
            return None
        outcome = {
            "ok": result.ok,
            "output": result.output[:RESULT_PREVIEW],
            "error": result.error,
        }
        runs = await self._run_all(
            "post_tool_use",
            hooks,
            tool=request.tool,
            input=request.params,
            call_id=request.call_id,
            result=outcome,
        )
        notes: list[str] = []
        for run in runs:
            if run.blocked:
                notes.append(run.stderr.strip())
                continue
            data, failure = _decision(run)
            if failure:
                log.warning("post_tool_use hook %r failed: %s", run.command, failure)
                notes.append(f"the hook {run.command!r} failed: {failure}")
            elif data:
                note = data.get("additional_context") or data.get("reason")
                if note:
                    notes.append(str(note))
        return "\n".join(n for n in notes if n) or None

    async def session_start(self) -> list[str]:
        """Run the session_start hooks; messages about the ones that failed."""
        return await self._simple("session_start")

    async def stop(self, reason: str, text: str) -> list[str]:
        """Run the stop hooks after a turn; messages about the ones that failed."""
        return await self._simple("stop", reason=reason, text=text)

    async def _simple(self, event: str, **extra: Any) -> list[str]:
        hooks = self._hooks[event]
        if not hooks:
            return []
        problems: list[str] = []
        for run in await self._run_all(event, hooks, **extra):
            _, failure = _decision(run)
            if failure:
                log.warning("%s hook %r failed: %s", event, run.command, failure)
                problems.append(f"{event} hook {run.command!r} failed: {failure}")
        return problems
