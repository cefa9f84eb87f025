"""Session assembly: the loop wired to a model, an executor, permissions and a session file.

`open_agent(settings, workspace, ...)` builds everything from the settings (or takes a ready
`Model` / `Executor`, as tests and benchmarks do), probes the server for the real `n_ctx`, and
creates or resumes the session. `Agent.aclose()` releases the executor and the HTTP client.
Its built-in tools (`builtin_toolsets`) are the worker's, run by the executor, and the conversation
tools (`openmono.conversation`), run here.

Extensions (`_extend`): hooks from `settings.hooks` (session_start when the session opens, stop
after each turn, pre/post tool use in the pipeline), the MCP servers' tools (`settings.mcp_servers`,
or a manager the surface shares between sessions), the `Agent` tool for sub-agents and the
`Playbook` tool (`openmono.playbooks`). The workspace's instructions (`_instructions`: notes,
rules, skills, custom agents and commands) join the prompt, the tools and each message.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from openmono_contracts import WebAccess, trust
from openmono_contracts.facts import PROJECT_MEMORY_DIR, USER_MEMORY_DIR
from openmono_contracts.sandbox import hidden_paths

from openmono.agent._grounding import PathGrounding
from openmono.agent._instructions import SessionInstructions, load_instructions, load_notices
from openmono.agent._prompts import prompt_override
from openmono.agent._repomap import RepoMapSource, map_budget
from openmono.agent._system_prompt import build_system_prompt
from openmono.config import Settings, current_environ, workspace_trusted
from openmono.conversation import ConversationTools, TodoItem
from openmono.executor import Executor, select_executor
from openmono.instructions import prompt_blocks
from openmono.llm import (
    LLMError,
    Model,
    ModelInfo,
    OpenAICompatModel,
    PromptedTools,
    ToolProtocol,
    TrustError,
    conversation,
)
from openmono.loop import (
    AgentLoop,
    Asker,
    Conversation,
    DispatchContext,
    Dispatcher,
    EventSink,
    LoopOptions,
    Notice,
    TextChunk,
    ToolCatalog,
    TurnDone,
    WorkerTools,
    discard,
    repair,
    replay,
)
from openmono.permissions import Approver, Mode, PermissionEngine
from openmono.sessions import (
    SessionHeader,
    SessionStore,
    SessionWriter,
    Snapshots,
    first_user_text,
)

if TYPE_CHECKING:
    from openmono.hooks import HookRunner
    from openmono.mcp import McpManager, McpToolset


# How long opening a session waits, in all, for its MCP servers to connect.
MCP_WAIT_S = 15.0


def open_model(settings: Settings) -> PromptedTools[OpenAICompatModel]:
    """The OpenAI-compatible client for `settings.llm` (verifying the gateway against the trust
    anchor, `gateway_ca`, and refusing plain http:// beyond loopback unless `insecure_http`),
    shown its tools by the protocol `llm.tool_protocol` asks for."""
    client = OpenAICompatModel(
        settings.llm, ca=settings.gateway_ca, insecure_http=settings.insecure_http
    )
    return PromptedTools(client, settings.llm)


def web_access(settings: Settings) -> WebAccess:
    key = settings.llm.api_key.get_secret_value() if settings.llm.api_key else None
    try:
        anchor = trust.load_anchor(settings.gateway_ca)
    except trust.TrustError as exc:
        raise TrustError(str(exc)) from None
    return WebAccess(
        gateway=settings.web.gateway or settings.llm.endpoint,
        api_key=key,
        search=settings.web.search,
        scrape=settings.web.scrape,
        ca=anchor,
        insecure_http=settings.insecure_http,
        public_fallback=settings.web.public_fallback,
    )


@dataclass
class Agent:
    """One session's loop plus everything it holds open."""

    loop: AgentLoop
    model: Model
    executor: Executor
    store: SessionStore
    writer: SessionWriter
    session_id: str
    workspace: Path
    info: ModelInfo | None
    snapshots: Snapshots
    permissions: PermissionEngine
    conversation: ConversationTools
    _titled: bool = False
    _owned: list[object] = field(default_factory=list)
    hooks: HookRunner | None = None
    mcp: McpToolset | None = None
    pending_notices: list[str] = field(default_factory=list)
    repomap: RepoMapSource | None = None
    instructions: SessionInstructions | None = None

    async def run_turn(
        self, prompt: str, emit: EventSink = discard, *, said: str | None = None
    ) -> TurnDone:
        """One user turn; `said`: the user's own words when `prompt` holds more (the files an
        editor attached), which decide whether the turn only reads (the safety floor)."""
        while self.pending_notices:
            emit(Notice(level="warning", message=self.pending_notices.pop(0)))
        if self.instructions is not None:
            prepared = self.instructions.prepare(prompt)
            for notice in prepared.notices:
                emit(Notice(message=notice))
            if prepared.prompt is None:  # /rules, /skills: answered without the model
                return self._answer(prepared.reply or "", emit)
            typed, prompt = prompt, prepared.prompt
        else:
            typed = prompt
        if not self._titled:
            self.store.set_title(self.session_id, typed)
            self._titled = True
        await self.refresh_map(prompt)
        with conversation(self.session_id):  # the gateway keeps its turns on one replica
            done = await self.loop.run_turn(prompt, emit, typed=typed if said is None else said)
        if self.hooks:
            for problem in await self.hooks.stop(done.reason, done.text):
                emit(Notice(level="warning", message=problem))
        return done

    async def refresh_map(self, prompt: str = "") -> bool:
        """Bring the repository map in the system prompt up to date; True when it changed."""
        if self.repomap is None:
            return False
        changed = await self.repomap.refresh(self.loop.conv.messages, prompt)
        if changed:
            self.loop.refresh_system_prompt()
        return changed

    @staticmethod
    def _answer(text: str, emit: EventSink) -> TurnDone:
        emit(TextChunk(text=text))
        done = TurnDone(reason="stop", text=text, iterations=0)
        emit(done)
        return done

    def undo(self) -> list[Path]:
        return self.snapshots.undo()

    @property
    def tool_protocol(self) -> ToolProtocol:
        """How the model is shown its tools (a model without the protocol wrapper: natively)."""
        return self.model.protocol if isinstance(self.model, PromptedTools) else "native"

    @property
    def protocol_reason(self) -> str:
        """Why that protocol ("auto: the chat template has no tool support (from props)", ...)."""
        choice = self.model.choice if isinstance(self.model, PromptedTools) else None
        return choice.reason if choice is not None else ""

    @property
    def todos(self) -> list[TodoItem]:
        """The session's todo list, as its last TodoWrite wrote it."""
        return self.conversation.todos(self.loop)

    def ground(self, model: Model) -> None:
        """Let a prompted model ask this workspace which words of a request are paths."""
        if isinstance(model, PromptedTools):
            model.grounding = PathGrounding(self.executor, self.workspace, self.session_id)

    async def switch_model(self, model: Model) -> None:
        """Talk to `model` from the next request on; the old one is closed if we opened it."""
        old, self.model, self.loop.model = self.model, model, model
        self.ground(model)
        self._owned.append(model)
        if old in self._owned:
            self._owned.remove(old)
            aclose = getattr(old, "aclose", None)
            if aclose is not None:
                await aclose()

    async def aclose(self) -> None:
        if self.mcp is not None:
            self.mcp.close()
        self.writer.close()
        for resource in self._owned:
            aclose = getattr(resource, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception):
                    await aclose()


def builtin_toolsets(executor: Executor, data_dir: Path) -> tuple[WorkerTools, ConversationTools]:
    """The tools every session starts with: the worker's (run by `executor`) and the
    conversation tools (user memory under `data_dir`)."""
    return WorkerTools(executor), ConversationTools(data_dir / USER_MEMORY_DIR)


async def probe_model(model: Model) -> ModelInfo | None:
    try:
        return await model.probe()
    except LLMError:
        return None


async def open_agent(
    settings: Settings,
    workspace: Path,
    *,
    resume: str | None = None,
    mode: Mode | None = None,
    allow: Sequence[str] = (),
    yolo: bool = False,
    approver: Approver | None = None,
    asker: Asker | None = None,
    model: Model | None = None,
    executor: Executor | None = None,
    probe: bool = True,
    mcp: McpManager | None = None,
) -> Agent:
    """Build an agent session for `workspace` (created, or resumed from `resume`).

    `mcp`: a started manager shared by several sessions; without one, the session starts (and
    owns) its own for `settings.mcp_servers`."""
    owned: list[object] = []
    if model is None:
        model = open_model(settings)
        owned.append(model)
    if executor is None:
        executor = select_executor(settings)
        owned.append(executor)
    info = await probe_model(model) if probe else None
    try:
        agent = _assemble(
            settings, workspace, info, model, executor, resume, mode, allow, yolo, approver, asker
        )
    except BaseException:
        for resource in owned:
            aclose = getattr(resource, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception):
                    await aclose()
        raise
    agent._owned = owned
    agent.ground(model)
    try:
        await _extend(agent, settings, mcp)
    except BaseException:
        await agent.aclose()
        raise
    return agent


async def _extend(agent: Agent, settings: Settings, mcp: McpManager | None) -> None:
    """Hooks, MCP tools and the `Agent` tool, plugged into the loop's extension points."""
    from openmono.hooks import HookRunner
    from openmono.playbooks import Host, PlaybookTool
    from openmono.subagents import AgentTool

    dispatcher, loop = agent.loop.dispatcher, agent.loop
    hooks = HookRunner(settings.hooks, agent.workspace, agent.session_id)
    if hooks:
        agent.hooks = dispatcher.hooks = hooks
        agent.pending_notices += await hooks.session_start()
    if mcp is None and any(s.enabled for s in settings.mcp_servers.values()):
        from openmono.mcp import McpManager

        mcp = McpManager(settings.mcp_servers, log_dir=settings.data_dir / "logs" / "mcp")
        agent._owned.append(mcp)
    if mcp:
        from openmono.mcp import McpToolset

        # The first request must already offer the servers' tools (or say why it cannot).
        agent.pending_notices += await mcp.connect(MCP_WAIT_S)
        agent.mcp = McpToolset(mcp, report=agent.pending_notices.append)
        dispatcher.catalog.install(agent.mcp)
    system_prompt = loop._system_prompt or (lambda _m: loop.conv.system)

    def named_model(name: str) -> Model:
        llm = settings.llm.model_copy(update={"model": name})
        return open_model(settings.model_copy(update={"llm": llm}))

    AgentTool(
        dispatcher,
        lambda: loop.model,
        loop.options,
        system_prompt,
        lambda: loop.mode,
        agent.store.root / agent.session_id / "agents",
        max_turns=settings.subagents.max_turns,
        custom=agent.instructions.custom_types() if agent.instructions else (),
        named_model=named_model,
    ).install()
    PlaybookTool(Host.of(loop, agent.store.root / agent.session_id, settings.data_dir)).install()


def _assemble(
    settings: Settings,
    workspace: Path,
    info: ModelInfo | None,
    model: Model,
    executor: Executor,
    resume: str | None,
    mode: Mode | None,
    allow: Sequence[str],
    yolo: bool,
    approver: Approver | None,
    asker: Asker | None,
) -> Agent:
    workspace = workspace.resolve()
    n_ctx = info.n_ctx if info and info.n_ctx else settings.llm.context_window
    run_mode: Mode = mode or settings.permissions.mode
    store = SessionStore(settings.data_dir)
    memory_dirs = [settings.data_dir / USER_MEMORY_DIR, workspace / PROJECT_MEMORY_DIR]
    repomap = None
    budget = map_budget(settings.repomap.tokens, n_ctx)
    if budget > 0:
        repomap = RepoMapSource(executor, workspace, "", budget)
    ins = load_instructions(settings, workspace)

    def system_prompt(m: Mode) -> str:
        override = prompt_override(m, settings.data_dir, workspace)
        base = override[0] if override else None
        block = repomap.block() if repomap is not None else None
        blocks = prompt_blocks(ins, n_ctx)
        return build_system_prompt(workspace, m, memory_dirs, base, repo_map=block, blocks=blocks)

    if resume:
        loaded = store.load(resume)
        writer = store.reopen(loaded)
        header = loaded.header
        messages, repairs = repair(replay(loaded.messages))
        titled = first_user_text(loaded.messages) is not None
        note = repairs.note()
    else:
        header = SessionHeader(
            working_directory=str(workspace),
            model=info.model if info else settings.llm.model,
            mode=run_mode,
        )
        writer = store.create(header)
        messages, titled, note = [], False, None
    conv = Conversation(system=system_prompt(run_mode), messages=messages, writer=writer)
    permissions = PermissionEngine(
        workspace,
        rules=settings.permissions.tools,
        yolo=yolo or settings.permissions.yolo,
        allow=allow,
        sandbox_approved=settings.permissions.sandbox,
        hidden=hidden_paths(
            workspace,
            data_dir=settings.data_dir,
            home=Path.home(),
            env_file=current_environ().file_path,
        ),
    )
    snapshots = store.snapshots(header.session_id)
    instructions = SessionInstructions.of(ins, header.session_id, conv, permissions)
    ctx = DispatchContext(
        workspace=workspace,
        session_id=header.session_id,
        timeout_s=settings.tool_timeout_s,
        web=web_access(settings),
        trusted=workspace_trusted(workspace),
    )
    worker, conversation = builtin_toolsets(executor, settings.data_dir)
    dispatcher = Dispatcher(
        ToolCatalog([instructions.worker(worker), conversation, instructions.skills]),
        permissions,
        ctx,
        approver=approver,
        asker=asker,
        snapshots=snapshots,
    )
    options = LoopOptions(
        max_iterations=settings.max_iterations,
        n_ctx=n_ctx,
        max_tokens=settings.llm.max_tokens,
        temperature=settings.llm.temperature,
    )
    loop = AgentLoop(
        model, dispatcher, conv, options=options, mode=run_mode, system_prompt=system_prompt
    )
    if repomap is not None:
        repomap.session_id = header.session_id
        repomap.facts_of = dispatcher.catalog.facts_of
    agent = Agent(
        loop=loop,
        model=model,
        executor=executor,
        store=store,
        writer=writer,
        session_id=header.session_id,
        workspace=workspace,
        info=info,
        snapshots=snapshots,
        permissions=permissions,
        conversation=conversation,
        _titled=titled,
        repomap=repomap,
        instructions=instructions,
    )
    agent.pending_notices.extend(settings.notes)
    agent.pending_notices.extend(load_notices(ins))
    if note:
        agent.pending_notices.append(note)
    return agent
