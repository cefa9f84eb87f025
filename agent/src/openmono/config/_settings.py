"""The settings model: one pydantic-settings class (env prefix `OPENMONO_`) with nested sections.

Nested keys come from the environment (and the env file, read the same way) with a single `_`
split after the prefix, so `OPENMONO_LLM_API_KEY` sets `llm.api_key` and
`OPENMONO_MAX_ITERATIONS` sets `max_iterations`. Booleans accept JSON booleans and the strings
1/true/yes/on and 0/false/no/off (pydantic lax). Where each value comes from, in which order:
`openmono.config._environ`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from openmono_contracts.facts import (
    ACP_PORT,
    DEFAULT_DATA_DIR,
    GATEWAY_PORT,
    LOOPBACK,
    parse_switch,
)
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from openmono.config import _dotnet_hooks, _layers
from openmono.config._fieldtrust import (
    APPLIES,
    NARROWS,
    ROUTES,
    ROUTES_UNLESS_OFF,
    RUNS,
    WIDENS,
    WIDENS_UNLESS_OFF,
    Trust,
)

# `agent` may change things; `plan` and `ask` are read-only (openmono.permissions guards them).
Mode = Literal["agent", "plan", "ask"]
MODES: tuple[Mode, ...] = ("agent", "plan", "ask")


class LLMSettings(BaseModel):
    """Where the model lives and how long we wait for it: the `llm` section, and what the
    OpenAI-compatible client (`openmono.llm.OpenAICompatModel`) takes as it is.

    `endpoint` may be `http://host:port`, `http://host:port/v1` or a relay URL with a path prefix;
    `/v1/chat/completions` and `/props` are resolved against it (see `normalize_endpoint`).
    """

    model_config = ConfigDict(extra="forbid")

    # follows GATEWAY_PORT when that is set (environment or env file): `_layers` says how
    endpoint: Annotated[str, ROUTES] = f"http://{LOOPBACK}:{GATEWAY_PORT}"
    api_key: Annotated[SecretStr | None, ROUTES] = None
    model: Annotated[str | None, APPLIES] = None
    connect_timeout_s: Annotated[float, APPLIES] = Field(default=10.0, gt=0)
    # Connect + prompt processing, which on a CPU takes minutes for a long prompt; raise it for a
    # big model on a CPU (the stall guard below only starts once tokens flow).
    first_token_timeout_s: Annotated[float, APPLIES] = Field(default=180.0, gt=0)
    # No byte at all (not even a keep-alive comment) for this long once the stream has started.
    stall_timeout_s: Annotated[float, APPLIES] = Field(default=90.0, gt=0)
    probe_timeout_s: Annotated[float, APPLIES] = Field(default=5.0, gt=0)
    max_retries: Annotated[int, APPLIES] = Field(default=3, ge=0, le=10)
    backoff_initial_s: Annotated[float, APPLIES] = Field(default=0.5, ge=0)
    backoff_max_s: Annotated[float, APPLIES] = Field(default=8.0, ge=0)
    retry_after_max_s: Annotated[float, APPLIES] = Field(default=60.0, ge=0)
    # Tool calls written as text (Qwen3 XML, Hermes JSON) are recovered into real calls.
    recover_text_calls: Annotated[bool, APPLIES] = True
    # native: the server's chat template shows the tools; prompted: we describe them in the system
    # prompt and read the calls from the text; auto: native unless /props (or a probe) says the
    # template has no tool support (openmono.llm._protocol)
    tool_protocol: Annotated[Literal["auto", "native", "prompted"], APPLIES] = "auto"
    # prompted calls on llama.cpp are constrained by a GBNF grammar (offered names, typed args)
    tool_grammar: Annotated[bool, APPLIES] = True
    # prompted, in a request that only reads: writers left out of the tool block, the grammar
    # and the worked examples ("narrow"); "off" shows every tool (openmono.llm._intent)
    tool_intent: Annotated[Literal["off", "narrow"], APPLIES] = "narrow"
    # prompted with the grammar: "two_step" asks a turn's first request which action it needs
    # (a few grammar-bound tokens), then allows only calls to that tool (openmono.llm._pick); the
    # default since it brought both small families measured to the call targets (agent-eval.md)
    tool_pick: Annotated[Literal["off", "two_step"], APPLIES] = "two_step"
    # with two_step: the picked call's path argument may only be a path the request names that
    # the workspace has (or, for a tool that writes, one it names to create); "off": any string
    # (openmono.llm._ground)
    tool_ground: Annotated[Literal["off", "named"], APPLIES] = "named"
    # with two_step: a request that asks for a change and has only read is asked its action again
    # when the result comes in, among the tools its change verb is made with (openmono.llm._pick);
    # the default since it raised the bundled model's right kinds on three held-out sets and lost
    # no task on either family measured (agent-eval.md)
    tool_repick: Annotated[Literal["off", "after_read"], APPLIES] = "after_read"
    max_tokens: Annotated[int | None, APPLIES] = Field(default=None, ge=1)
    temperature: Annotated[float | None, APPLIES] = Field(default=None, ge=0)
    # Used until `/props` answers; the probe's real n_ctx replaces it.
    context_window: Annotated[int, APPLIES] = Field(default=8192, ge=256)


class WebSettings(BaseModel):
    """How web tools reach the gateway (docs/architecture.md §6); `None` means "ask `/services`"."""

    model_config = ConfigDict(extra="forbid")

    gateway: Annotated[str | None, ROUTES] = None
    # the switches choose between the gateway this file may not name and its absence
    search: Annotated[bool | None, APPLIES] = None
    scrape: Annotated[bool | None, APPLIES] = None
    # WebSearch (asked nothing) may go to DuckDuckGo, and read its hits, straight from this box
    # when the gateway cannot serve it (docs/configuration.md, "Web search without the gateway")
    public_fallback: Annotated[bool, ROUTES_UNLESS_OFF] = False


class ToolRules(BaseModel):
    """Glob patterns over one tool's arguments; deny beats ask beats allow."""

    model_config = ConfigDict(extra="forbid")

    allow: Annotated[list[str], WIDENS] = Field(default_factory=list)
    # an ask rule comes after every denial and before every allowance: it only narrows
    ask: Annotated[list[str], NARROWS] = Field(default_factory=list)
    deny: Annotated[list[str], NARROWS] = Field(default_factory=list)

    @field_validator("allow", "ask", "deny", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value


class PermissionSettings(BaseModel):
    """`permissions.tools.<Tool>.allow|ask|deny` plus the run-wide switches."""

    model_config = ConfigDict(extra="forbid")

    tools: dict[str, ToolRules] = Field(default_factory=dict)
    yolo: Annotated[bool, WIDENS_UNLESS_OFF] = False
    # plan and ask are read-only: from an untrusted project they narrow, `agent` would widen
    mode: Annotated[Mode, Trust("widens", lambda v: v in ("plan", "ask"))] = "agent"
    # Approved (and rule-allowed) shell calls run in the OS sandbox too, with the workspace
    # writable; read-only ones always do where it can run (docs/security.md). On only narrows.
    sandbox: Annotated[bool, Trust("widens", lambda v: parse_switch(v) is True)] = False


class HookCommand(BaseModel):
    """One hook: a shell command run with the event's JSON on stdin (see `openmono.hooks`).

    `matcher` picks tools by name (a regex over the whole name, `*` = every tool); `input` narrows
    further to calls whose JSON arguments contain that text, or match it as `re:REGEX`.
    """

    model_config = ConfigDict(extra="forbid")

    command: str
    matcher: str = "*"
    input: str | None = None
    timeout_s: float = Field(default=30.0, gt=0, le=3600)


class HookSettings(BaseModel):
    """Hooks per event; each runs in its own process group and is killed on its timeout.

    The .NET OpenMono's format (`preToolUse: [{"if": {...}, "run": ...}]`) is read too, or refused
    with the equivalent in this one (`_dotnet_hooks`).
    """

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _dotnet(cls, data: Any) -> Any:
        return _dotnet_hooks.from_dotnet(data)

    session_start: list[HookCommand] = Field(default_factory=list)
    pre_tool_use: list[HookCommand] = Field(default_factory=list)
    post_tool_use: list[HookCommand] = Field(default_factory=list)
    stop: list[HookCommand] = Field(default_factory=list)


class McpServerSettings(BaseModel):
    """An MCP server: a command over stdio, or a streamable-HTTP `url` (see `openmono.mcp`)."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: Path | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    enabled: bool = True
    connect_timeout_s: float = Field(default=30.0, gt=0)
    call_timeout_s: float = Field(default=120.0, gt=0)


class AcpSettings(BaseModel):
    """`openmono serve`: where the HTTP/SSE ACP server listens and the bearer it wants."""

    model_config = ConfigDict(extra="forbid")

    host: Annotated[str, ROUTES] = "127.0.0.1"
    port: Annotated[int, APPLIES] = Field(default=ACP_PORT, ge=0, le=65535)
    # a bearer the project chose is a bearer the project knows
    token: Annotated[SecretStr | None, WIDENS] = None
    # auto: HTTPS (a self-signed certificate, acp/_tls.py) whenever `host` is beyond loopback;
    # on: HTTPS on loopback too (e.g. when a local tunnel carries the port elsewhere)
    tls: Annotated[Literal["auto", "on"], Trust("widens", lambda v: v == "on")] = "auto"


class SubagentSettings(BaseModel):
    """The `Agent` tool: how many model rounds a sub-agent gets at most."""

    model_config = ConfigDict(extra="forbid")

    max_turns: Annotated[int, APPLIES] = Field(default=20, ge=1, le=200)


class RepoMapSettings(BaseModel):
    """The repository map in the system prompt (docs/code-intelligence.md): its token budget.

    None scales it with the context (n_ctx / 8: about 1k tokens at 8k, at most 4k); 0 turns the
    map off."""

    model_config = ConfigDict(extra="forbid")

    tokens: Annotated[int | None, APPLIES] = Field(default=None, ge=0, le=16384)


class Settings(BaseSettings):
    """Everything the agent core reads at startup."""

    model_config = SettingsConfigDict(
        env_prefix="OPENMONO_",
        env_nested_delimiter="_",
        env_nested_max_split=1,
        extra="ignore",
        case_sensitive=False,
    )

    llm: LLMSettings = Field(default_factory=LLMSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    permissions: PermissionSettings = Field(default_factory=PermissionSettings)
    max_iterations: Annotated[int, APPLIES] = Field(default=50, ge=1)
    tool_timeout_s: Annotated[float, APPLIES] = Field(default=120.0, gt=0, le=3600)
    # sessions, memory, artifacts and the user's own playbooks live there
    data_dir: Annotated[Path, ROUTES] = Path(DEFAULT_DATA_DIR)
    # where tool calls (with their files and the gateway key) are queued
    broker_url: Annotated[str | None, ROUTES] = None
    # the gateway's CA, as `openmono setup join` prints it (OPENMONO_GATEWAY_CA): inline PEM or a
    # file path; every gateway connection (LLM, /services, web tools) is verified against it alone
    gateway_ca: Annotated[str | None, ROUTES] = Field(default=None, repr=False)
    # plain http:// to a host beyond loopback is refused unless this is set (OPENMONO_INSECURE_HTTP)
    insecure_http: Annotated[bool, WIDENS_UNLESS_OFF] = False
    # the folder the tools are confined to
    workspace: Annotated[Path | None, WIDENS] = None
    hooks: Annotated[HookSettings, RUNS] = Field(default_factory=HookSettings)
    mcp_servers: Annotated[dict[str, McpServerSettings], RUNS] = Field(default_factory=dict)
    acp: AcpSettings = Field(default_factory=AcpSettings)
    subagents: SubagentSettings = Field(default_factory=SubagentSettings)
    repomap: RepoMapSettings = Field(default_factory=RepoMapSettings)
    # What loading left out and why (an untrusted project's hooks, ...): shown by the surfaces.
    _notes: list[str] = PrivateAttr(default_factory=list)

    @property
    def notes(self) -> list[str]:
        return self._notes

    @field_validator("data_dir", mode="after")
    @classmethod
    def _expand(cls, value: Path) -> Path:
        return value.expanduser()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Highest first: flags (init kwargs) > the environment > the env file > the settings
        # files > the defaults (the endpoint's follows GATEWAY_PORT).
        return (init_settings, *(source for _, source in _layers.agent_sources(settings_cls)))
