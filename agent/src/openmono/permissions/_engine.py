"""The permission engine: rules, session choices and built-in policy, in a fixed order.

Order (first match wins):
    1. built-in denials (protected paths, destructive commands) — nothing lifts them
    2. session deny-all, tools denied for the session, `deny` rules
    3. `--yolo` / session allow-all → allow
    4. `ask` rules → ask
    5. `allow` rules, `--allow TOOL[:pattern]`, session approvals → allow
    6. defaults, from the tool's facts: conversation tools and those declaring `permission="allow"`
       → allow; read-only shell commands → allow, in the read-only sandbox (`_readonly`: where
       no sandbox can run, only what the parser proves harmless); `permission="ask"`
       (WebFetch) → ask; read-only tools inside the workspace → allow; anything else → ask
An `ask` with no one to ask (a non-interactive run) becomes a denial whose message tells the model
what to do instead; it never waits.

A shell call's decision also says which sandbox it runs in (`Decision.sandbox`, sent as
`ToolRequest.sandbox`): `read_only` when it runs because it is read-only (or the mode allows
nothing else), `workspace_write` for every other allowed shell call under `permissions.sandbox`,
else none. Shell patterns match as `_shellrules` says: an allow pattern never covers a chained,
piped, substituted or redirected command line it was not written for.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from openmono_contracts.sandbox import SandboxPolicy
from openmono_contracts.toolfacts import ToolFacts

from openmono.config import ToolRules
from openmono.permissions import _shellrules
from openmono.permissions._builtin import builtin_denial
from openmono.permissions._errors import PermissionsError
from openmono.permissions._readonly import ReadOnly
from openmono.permissions._subjects import call_paths, pattern_matches, resolve_path

Action = Literal["allow", "ask", "deny"]
Answer = Literal["once", "session", "deny", "deny_session"]


@dataclass(frozen=True)
class Decision:
    """The engine's verdict on one call, with a reason a person or a model can read."""

    action: Action
    reason: str
    source: str
    # the OS sandbox an allowed shell call runs in (see the module docstring)
    sandbox: SandboxPolicy | None = None


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
    """What "allow for the session" covers: for a shell command what `_shellrules` says is safe
    to store, else the whole tool."""
    if facts.shell_param:
        return _shellrules.session_grant(str(args.get(facts.shell_param, "")))
    return "*"


def _shell_pattern(pattern: str, facts: ToolFacts) -> str | None:
    """The part of a rule pattern that is about a shell tool's command line (bare, or
    `command=...`); None for a pattern about another argument."""
    key, sep, glob = pattern.partition("=")
    if sep and key.isidentifier() and key != facts.shell_param:
        return None
    return glob if sep and key == facts.shell_param else pattern


@dataclass
class PermissionEngine:
    """Decides allow / ask / deny for each call; holds the choices made during the session."""

    workspace: Path
    rules: Mapping[str, ToolRules] = field(default_factory=dict)
    yolo: bool = False
    allow: Sequence[str] = ()
    allow_all: bool = False
    deny_all: bool = False
    # Can the tools' worker sandbox a command (None: ask this machine's kernel)? And does
    # `permissions.sandbox` put every other allowed shell call in the writable sandbox?
    sandbox_available: bool | None = None
    sandbox_approved: bool = False
    # Paths no command reads without asking where no sandbox runs (None: the defaults of
    # `openmono_contracts.sandbox.hidden_paths` for this workspace).
    hidden: Sequence[Path] | None = None
    _granted: list[tuple[str, str]] = field(default_factory=list)
    _denied_tools: set[str] = field(default_factory=set)
    # Files this session's own calls wrote for the model to read (spilled outputs, background
    # logs): they live outside the workspace, and the result told the model to read them.
    _outputs: set[Path] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.workspace = self.workspace.resolve()
        self._granted = [parse_allow_spec(s) for s in self.allow]
        if self.sandbox_available is None:
            from openmono_worker import sandbox_support

            self.sandbox_available = sandbox_support().available
        if self.hidden is None:
            from openmono_contracts.facts import DEFAULT_DATA_DIR
            from openmono_contracts.sandbox import hidden_paths

            data_dir = Path(DEFAULT_DATA_DIR).expanduser()
            self.hidden = hidden_paths(self.workspace, data_dir=data_dir, home=Path.home())
        self.read_only = ReadOnly(self.workspace, tuple(self.hidden))

    def _matches(self, kind: str, pattern: str, args: Mapping[str, Any], facts: ToolFacts) -> bool:
        shell = _shell_pattern(pattern, facts) if facts.shell_param else None
        if shell is None:
            return pattern_matches(pattern, facts, args, self.workspace)
        command = str(args.get(facts.shell_param or "", ""))
        if kind == "allow":
            return _shellrules.allowed([shell], command) is not None
        return _shellrules.hits(shell, command)

    def _rule_hit(
        self, kind: str, tool: str, args: Mapping[str, Any], facts: ToolFacts
    ) -> str | None:
        for key in (tool, "*"):
            rules = self.rules.get(key)
            for pattern in getattr(rules, kind) if rules else ():
                if self._matches(kind, pattern, args, facts):
                    return f"{kind} rule {key}:{pattern}"
        return None

    def _shell_allowed(self, tool: str, args: Mapping[str, Any], facts: ToolFacts) -> str | None:
        """The rule or grant that allows a shell call, each part of a chained one matched by
        any of them (`_shellrules.allowed`)."""
        labelled: dict[str, str] = {}
        for key in (tool, "*"):
            rules = self.rules.get(key)
            for pattern in rules.allow if rules else ():
                shell = _shell_pattern(pattern, facts)
                if shell is not None:
                    labelled.setdefault(shell, f"allowed by the allow rule {key}:{pattern}")
        for granted_tool, pattern in self._granted:
            shell = _shell_pattern(pattern, facts) if granted_tool in (tool, "*") else None
            if shell is not None:
                labelled.setdefault(shell, f"allowed by {granted_tool}:{pattern}")
        hit = _shellrules.allowed(labelled, str(args.get(facts.shell_param or "", "")))
        return labelled[hit] if hit is not None else None

    def _shell_sandbox(self, facts: ToolFacts) -> SandboxPolicy | None:
        return "workspace_write" if facts.shell_param and self.sandbox_approved else None

    def decide(
        self, tool: str, args: Mapping[str, Any], facts: ToolFacts, *, read_only: bool = False
    ) -> Decision:
        """The verdict for one call, before anyone is asked; `read_only`: the mode lets it
        change nothing (plan, ask), so an allowed shell call runs in the read-only sandbox."""
        decision = self._decide(tool, args, facts)
        if read_only and facts.shell_param and decision.action == "allow":
            return self._read_only(decision, args, facts)
        return decision

    def _read_only(self, decision: Decision, args: Mapping[str, Any], facts: ToolFacts) -> Decision:
        if self.sandbox_available:
            return replace(decision, sandbox="read_only")
        command = str(args.get(facts.shell_param or "", ""))
        why = self.read_only.reason(command, sandboxed=False)
        if why is None:
            return replace(decision, sandbox=None)
        return Decision(
            "ask", f"this mode changes nothing, no sandbox runs here, and {why}", "mode"
        )

    def _decide(self, tool: str, args: Mapping[str, Any], facts: ToolFacts) -> Decision:
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
        sandbox = self._shell_sandbox(facts)
        if self.yolo or self.allow_all:
            return Decision("allow", "all calls allowed (--yolo / allow-all)", "session", sandbox)
        hit = self._rule_hit("ask", tool, args, facts)
        if hit:
            return Decision("ask", f"the {hit} requires approval", "rule")
        if facts.shell_param:
            allowed_by = self._shell_allowed(tool, args, facts)
            if allowed_by:
                return Decision("allow", allowed_by, "rule", sandbox)
            return self._default(tool, args, facts)
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
            return self._default_shell(str(args.get(facts.shell_param, "")), args)
        if facts.permission == "ask":
            return Decision("ask", f"{tool} contacts an outside site and needs approval", "default")
        if facts.read_only:
            paths = call_paths(facts, args, self.workspace)
            if paths and all(p in self._outputs for p in paths):
                return Decision("allow", "a read of this session's own tool output", "default")
            hidden = tuple(self.hidden or ())
            secret = next((p for p in paths for h in hidden if p == h or h in p.parents), None)
            if secret is not None:
                return Decision("ask", f"reading {secret} (a secret) needs approval", "default")
            inside = all(p == self.workspace or self.workspace in p.parents for p in paths)
            if inside:
                return Decision("allow", "a read inside the workspace", "default")
            return Decision("ask", "reading outside the workspace needs approval", "default")
        if facts.writes:
            return Decision("ask", f"{tool} changes files and needs approval", "default")
        # Nothing declares what it does (an MCP server's tool without `readOnlyHint`): say so.
        return Decision(
            "ask", f"{tool} does not declare what it changes, so it needs approval", "default"
        )

    def _default_shell(self, command: str, args: Mapping[str, Any]) -> Decision:
        if args.get("background"):
            return Decision("ask", "a background command needs approval", "default")
        if self.sandbox_available:
            why = self.read_only.reason(command, sandboxed=True)
            if why is None:
                reason = "a read-only command (it runs in the read-only sandbox)"
                return Decision("allow", reason, "default", "read_only")
        else:
            why = self.read_only.reason(command, sandboxed=False)
            if why is None:
                reason = "a command the shell parser proves read-only (no sandbox runs here)"
                return Decision("allow", reason, "default")
        return Decision("ask", f"running this shell command needs approval: {why}", "default")

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
        *,
        read_only: bool = False,
    ) -> Decision:
        """`decide`, then resolve an `ask` through the approver, or deny when there is none."""
        decision = self.decide(tool, args, facts, read_only=read_only)
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
            approved = Decision(
                "allow", f"approved by the user ({answer})", "user", self._shell_sandbox(facts)
            )
            if read_only and facts.shell_param and self.sandbox_available:
                return replace(approved, sandbox="read_only")
            return approved
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
