"""The permission engine: rules, session choices and built-in policy, in a fixed order.

Order (first match wins):
    1. built-in denials (protected paths, destructive commands) — nothing lifts them
    2. session deny-all, tools denied for the session, `deny` rules
    3. `--yolo` / session allow-all → allow
    4. `ask` rules → ask
    5. `allow` rules, `--allow TOOL[:pattern]`, session approvals → allow
    6. defaults, from the tool's facts: conversation tools and those declaring `permission="allow"`
       → allow; safe read-only shell commands → allow; `permission="ask"` (WebFetch) → ask;
       read-only tools inside the workspace → allow; anything else → ask
An `ask` with no one to ask (a non-interactive run) becomes a denial whose message tells the model
what to do instead; it never waits.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from openmono_contracts.toolfacts import ToolFacts

from openmono.config import ToolRules
from openmono.permissions._bash import is_safe_read_only, segments
from openmono.permissions._builtin import builtin_denial
from openmono.permissions._errors import PermissionsError
from openmono.permissions._subjects import call_paths, pattern_matches, resolve_path

Action = Literal["allow", "ask", "deny"]
Answer = Literal["once", "session", "deny", "deny_session"]


@dataclass(frozen=True)
class Decision:
    """The engine's verdict on one call, with a reason a person or a model can read."""

    action: Action
    reason: str
    source: str


@dataclass(frozen=True)
class PermissionRequest:
    """What an interactive approver is shown."""

    call_id: str
    tool: str
    arguments: Mapping[str, Any]
    reason: str
    session_pattern: str


Approver = Callable[[PermissionRequest], Awaitable[Answer]]


def parse_allow_spec(spec: str) -> tuple[str, str]:
    """`Bash:pytest*` → ("Bash", "pytest*"); `FileWrite` → ("FileWrite", "*")."""
    tool, _, pattern = spec.partition(":")
    if not tool.strip():
        raise PermissionsError(f"--allow {spec!r}: expected TOOL or TOOL:pattern")
    return tool.strip(), pattern or "*"


def session_pattern(facts: ToolFacts, args: Mapping[str, Any]) -> str:
    """What "allow for the session" covers: a shell command's program, else the whole tool."""
    if facts.shell_param:
        command = str(args.get(facts.shell_param, ""))
        parts = segments(command)
        words = parts[0].split() if len(parts) == 1 else []
        return f"{words[0]} *" if words else command
    return "*"


@dataclass
class PermissionEngine:
    """Decides allow / ask / deny for each call; holds the choices made during the session."""

    workspace: Path
    rules: Mapping[str, ToolRules] = field(default_factory=dict)
    yolo: bool = False
    allow: Sequence[str] = ()
    allow_all: bool = False
    deny_all: bool = False
    _granted: list[tuple[str, str]] = field(default_factory=list)
    _denied_tools: set[str] = field(default_factory=set)
    # Files this session's own calls wrote for the model to read (spilled outputs, background
    # logs): they live outside the workspace, and the result told the model to read them.
    _outputs: set[Path] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.workspace = self.workspace.resolve()
        self._granted = [parse_allow_spec(s) for s in self.allow]

    def _rule_hit(
        self, kind: str, tool: str, args: Mapping[str, Any], facts: ToolFacts
    ) -> str | None:
        for key in (tool, "*"):
            rules = self.rules.get(key)
            for pattern in getattr(rules, kind) if rules else ():
                if pattern_matches(pattern, facts, args, self.workspace):
                    return f"{kind} rule {key}:{pattern}"
        return None

    def decide(self, tool: str, args: Mapping[str, Any], facts: ToolFacts) -> Decision:
        """The verdict for one call, before anyone is asked."""
        why = builtin_denial(facts, args, self.workspace)
        if why:
            return Decision("deny", why, "builtin")
        if self.deny_all:
            return Decision("deny", "the user denied all tool calls for this session", "session")
        if tool in self._denied_tools:
            return Decision("deny", f"the user denied {tool} for this session", "session")
        hit = self._rule_hit("deny", tool, args, facts)
        if hit:
            return Decision("deny", f"denied by the {hit}", "rule")
        if self.yolo or self.allow_all:
            return Decision("allow", "all calls allowed (--yolo / allow-all)", "session")
        hit = self._rule_hit("ask", tool, args, facts)
        if hit:
            return Decision("ask", f"the {hit} requires approval", "rule")
        hit = self._rule_hit("allow", tool, args, facts)
        if hit:
            return Decision("allow", f"allowed by the {hit}", "rule")
        for granted_tool, pattern in self._granted:
            if granted_tool in (tool, "*") and pattern_matches(
                pattern, facts, args, self.workspace
            ):
                return Decision("allow", f"allowed by {granted_tool}:{pattern}", "flag")
        return self._default(tool, args, facts)

    def note_output(self, path: str) -> None:
        """A call of this session wrote `path` for the model: reading it needs no approval."""
        self._outputs.add(resolve_path(path, self.workspace))

    def _default(self, tool: str, args: Mapping[str, Any], facts: ToolFacts) -> Decision:
        if facts.conversation or facts.permission == "allow":
            return Decision("allow", "changes nothing outside the conversation", "default")
        if facts.shell_param:
            if is_safe_read_only(str(args.get(facts.shell_param, ""))):
                return Decision("allow", "a read-only command", "default")
            return Decision("ask", "running a shell command needs approval", "default")
        if facts.permission == "ask":
            return Decision("ask", f"{tool} contacts an outside site and needs approval", "default")
        if facts.read_only:
            paths = call_paths(facts, args, self.workspace)
            inside = all(p == self.workspace or self.workspace in p.parents for p in paths)
            if inside:
                return Decision("allow", "a read inside the workspace", "default")
            if paths and all(p in self._outputs for p in paths):
                return Decision("allow", "a read of this session's own tool output", "default")
            return Decision("ask", "reading outside the workspace needs approval", "default")
        if facts.writes:
            return Decision("ask", f"{tool} changes files and needs approval", "default")
        # Nothing declares what it does (an MCP server's tool without `readOnlyHint`): say so.
        return Decision(
            "ask", f"{tool} does not declare what it changes, so it needs approval", "default"
        )

    def remember(
        self, tool: str, args: Mapping[str, Any], facts: ToolFacts, answer: Answer
    ) -> None:
        """Record a session-wide answer ("session" or "deny_session")."""
        if answer == "session":
            self._granted.append((tool, session_pattern(facts, args)))
        elif answer == "deny_session":
            self._denied_tools.add(tool)

    async def authorize(
        self,
        call_id: str,
        tool: str,
        args: Mapping[str, Any],
        facts: ToolFacts,
        approver: Approver | None,
    ) -> Decision:
        """`decide`, then resolve an `ask` through the approver, or deny when there is none."""
        decision = self.decide(tool, args, facts)
        if decision.action != "ask":
            return decision
        if approver is None:
            return Decision(
                "deny", non_interactive_message(tool, decision.reason), "noninteractive"
            )
        request = PermissionRequest(
            call_id, tool, args, decision.reason, session_pattern(facts, args)
        )
        answer = await approver(request)
        self.remember(tool, args, facts, answer)
        if answer in ("once", "session"):
            return Decision("allow", f"approved by the user ({answer})", "user")
        return Decision(
            "deny",
            "the user declined this call. Do not retry it; ask the user how to proceed "
            "or take another approach.",
            "user",
        )


def non_interactive_message(tool: str, reason: str) -> str:
    """The denial a non-interactive run gives the model (and the person reading the log)."""
    return (
        f"{reason}, and this run is non-interactive, so nobody can approve it. Do not retry the "
        "same call. Continue with what you can do without it and report the change you would "
        f"make; "
        f"the user can rerun with --allow {tool} (or --allow '{tool}:PATTERN', or --yolo)."
    )
