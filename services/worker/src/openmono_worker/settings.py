"""Worker settings: one pydantic-settings class, env prefix `WORKER_`, with a nested `web` section.

    WorkerSettings          WORKER_*       limits and locations of every tool call, and the Celery
                                           app's knobs (`broker_url`, `concurrency`, ...)
     ├── web: WebToolSettings  WORKER_WEB_*  timeouts, caches and fallbacks of WebSearch / WebFetch
     ├── codeintel: CodeIntelSettings  WORKER_CODEINTEL_*  the code tools (Lsp, CodeIntel, the
     │                                     diagnostics an edit adds)
     ├── limits: CommandLimits  WORKER_LIMITS_*  rlimits of every command a tool runs
     └── sandbox: SandboxSettings  WORKER_SANDBOX_*  what the OS sandbox offers besides its
                                           default view, and what more it hides

The data dir is read from `WORKER_DATA_DIR`, else `OPENMONO_DATA_DIR` (the variable the whole stack
shares, docs/architecture.md §9), else `~/.openmono`. Artifacts default to `<data dir>/artifacts`,
background Bash logs to `<data dir>/bash`. The broker is `OPENMONO_BROKER_URL`, else
`WORKER_BROKER_URL`.
The web switches keep the names the agent documents (`OPENMONO_WEB_SEARCH`, `OPENMONO_WEB_SCRAPE`):
the agent resolves them into `ToolRequest.web`, and the worker reads them too when a request leaves
a switch unset. Everything else of the web section lives under `WORKER_WEB_` on purpose: the
agent's settings own `OPENMONO_WEB_*` and would refuse a key they do not know.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any, Literal

from openmono_contracts.facts import (
    BROKER_URL_ENV,
    DATA_DIR_ENV,
    DEFAULT_DATA_DIR,
    LOOPBACK,
    REDIS_PASSWORD_ENV,
    REDIS_PORT,
    parse_switch,
)
from openmono_contracts.redisauth import with_password
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

DDG_HTML_URL = "https://html.duckduckgo.com/html/"


class WebToolSettings(BaseModel):
    """Timeouts, caches and fallback targets of WebSearch / WebFetch (`WORKER_WEB_*`)."""

    model_config = ConfigDict(extra="ignore")

    # The explicit switches: `OPENMONO_WEB_SEARCH|SCRAPE` (the names the agent documents) win
    # over `WORKER_WEB_SEARCH|SCRAPE`; the request's own `web` switches win over both.
    search: bool | None = None
    scrape: bool | None = None
    # docs/architecture.md §6: the probe waits 5 s; the gateway paths 15 s (search) and 90 s
    # (scrape).
    probe_timeout_s: float = Field(default=5.0, gt=0)
    search_timeout_s: float = Field(default=15.0, gt=0)
    scrape_timeout_s: float = Field(default=90.0, gt=0)
    # A good probe is reused for a while; a failed one only briefly, so a gateway that comes
    # back is noticed without restarting the agent.
    probe_ttl_s: float = Field(default=60.0, ge=0)
    probe_failure_ttl_s: float = Field(default=5.0, ge=0)
    # The fallback search endpoint (tests point it at a local fake).
    ddg_url: str = DDG_HTML_URL
    ddg_timeout_s: float = Field(default=15.0, gt=0)
    # Direct fetch (the fallback of WebFetch): limits and the SSRF allow-list (tests: 127.0.0.0/8).
    fetch_timeout_s: float = Field(default=30.0, gt=0)
    fetch_max_bytes: int = Field(default=5 * 1024 * 1024, ge=1024)
    fetch_max_redirects: int = Field(default=5, ge=0, le=20)
    fetch_allow_cidrs: str = ""
    user_agent: str = (
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/131.0 Safari/537.36 OpenMono"
    )

    @field_validator("search", "scrape", mode="before")
    @classmethod
    def _switch(cls, value: object) -> bool | None:
        return parse_switch(value)

    @property
    def allow_cidrs(self) -> list[str]:
        return [c.strip() for c in self.fetch_allow_cidrs.split(",") if c.strip()]


class CodeIntelSettings(BaseModel):
    """The code tools (`WORKER_CODEINTEL_*`): Lsp, CodeIntel, the diagnostics an edit adds.

    The variables kept their names when this became a section of `WorkerSettings` (it was a
    settings class of its own): `WORKER_CODEINTEL_EDIT_WAIT_S` is `codeintel.edit_wait_s` under the
    `WORKER_` prefix, as `WORKER_WEB_*` is the web section. Deprecated: building
    `CodeIntelSettings()` alone to read them; it has the defaults only. Read
    `WorkerSettings().codeintel`, or `codeintel_settings()` where no tool context is at hand.
    """

    model_config = ConfigDict(extra="ignore")

    # Post-edit diagnostics: off switch, total wait per edit (before + after), how many to show.
    edit_diagnostics: bool = True
    edit_wait_s: float = Field(default=8.0, ge=0)
    edit_max_errors: int = Field(default=10, ge=1)
    # Lsp tool requests (the tool's own timeout caps it further).
    request_timeout_s: float = Field(default=30.0, gt=0)
    # A server unused this long is stopped (started again on the next use).
    idle_stop_s: float = Field(default=1800.0, gt=0)
    # At most this many servers per process (each is a node or native process of 100+ MB); the
    # least recently used one is stopped to make room.
    max_servers: int = Field(default=4, ge=1)
    # Workspace-wide diagnostics (basedpyright CLI over every file).
    check_timeout_s: float = Field(default=120.0, gt=0)


class CommandLimits(BaseModel):
    """Per-process rlimits of every command a tool runs (`WORKER_LIMITS_*`); 0 leaves one as it is.

    They bound what one command can take (a fork bomb, a runaway write, a spinning loop), in
    foreground calls and background jobs alike. Set as soft and hard limit, so the command cannot
    raise them (unless it holds CAP_SYS_RESOURCE: root outside the sandbox). The kernel does not
    apply `processes` to root (uid 0) at all; it counts every process and thread of the user.
    """

    model_config = ConfigDict(extra="ignore")

    cpu_s: int = Field(default=3600, ge=0)
    file_mb: int = Field(default=4096, ge=0)
    processes: int = Field(default=8192, ge=0)


class SandboxSettings(BaseModel):
    """The OS sandbox of shell calls (`WORKER_SANDBOX_*`, openmono_worker.sandbox).

    `read`: more folders a sandboxed command may read (comma-separated absolute paths, such as a
    toolchain under home: `~/.pyenv,~/.cargo/bin`); `hide`: more paths it may not read, even
    inside what it is offered."""

    model_config = ConfigDict(extra="ignore")

    read: str = ""
    hide: str = ""

    @staticmethod
    def _paths(value: str) -> list[Path]:
        return [Path(p.strip()).expanduser() for p in value.split(",") if p.strip()]

    @property
    def read_paths(self) -> list[Path]:
        return self._paths(self.read)

    @property
    def hidden_paths(self) -> list[Path]:
        return self._paths(self.hide)


class _WebSwitches(PydanticBaseSettingsSource):
    """`OPENMONO_WEB_SEARCH|SCRAPE` into `web.search|scrape` (above `WORKER_WEB_*`)."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ gives the whole mapping

    def __call__(self) -> dict[str, Any]:
        found = {
            key: os.environ[f"OPENMONO_WEB_{key.upper()}"]
            for key in ("search", "scrape")
            if os.environ.get(f"OPENMONO_WEB_{key.upper()}", "").strip()
        }
        return {"web": found} if found else {}


class WorkerSettings(BaseSettings):
    """Limits and locations used by every tool call in this process."""

    model_config = SettingsConfigDict(
        env_prefix="WORKER_",
        env_nested_delimiter="_",
        env_nested_max_split=1,
        extra="ignore",
        populate_by_name=True,
    )

    data_dir: Path = Field(
        default=Path(DEFAULT_DATA_DIR),
        validation_alias=AliasChoices("WORKER_DATA_DIR", DATA_DIR_ENV, "data_dir"),
    )
    artifact_dir: Path | None = None
    # Outputs above this many bytes go to an artifact file; the model gets a head and the path.
    artifact_threshold_bytes: int = Field(default=10 * 1024, ge=1024)
    artifact_head_bytes: int = Field(default=4 * 1024, ge=256)
    artifact_tail_bytes: int = Field(default=2 * 1024, ge=0)
    # What a command may print before we stop keeping it (head and tail kept, the middle dropped).
    bash_max_output_bytes: int = Field(default=1024 * 1024, ge=1024)
    # Grep: "auto" uses ripgrep when it is on PATH, else the Python engine; tests force each one.
    grep_engine: Literal["auto", "rg", "python"] = "auto"
    # FileRead refuses files larger than this; use Grep or offset/limit on smaller ones.
    read_max_file_bytes: int = Field(default=20 * 1024 * 1024, ge=1024)

    # --- The Celery app (celery_app.create_app); the agent's client uses the same values.
    broker_url: str = Field(
        default=f"redis://{LOOPBACK}:{REDIS_PORT}/0",
        validation_alias=AliasChoices(BROKER_URL_ENV, "WORKER_BROKER_URL", "broker_url"),
    )
    # The password Redis requires (REDIS_PASSWORD, the env file's): added to `broker_url` when
    # the URL names none, so the URL in logs and banners never carries it (redisauth.py).
    redis_password: SecretStr = Field(
        default=SecretStr(""),
        validation_alias=AliasChoices(
            REDIS_PASSWORD_ENV, "WORKER_REDIS_PASSWORD", "redis_password"
        ),
    )
    # The workspace roots this worker serves, comma-separated absolute paths (routing.py): set,
    # it consumes one queue per root's workspace id and runs calls inside those roots only;
    # unset, it serves the workspaces of its own box that lie inside `roots`.
    workspaces: str = ""
    # Box mode (no `workspaces`): the folders whose workspaces it runs calls in, comma-separated
    # absolute paths; empty = the home folder of the worker's user. A call for a workspace
    # elsewhere is refused (routing.py), whoever queued it.
    roots: str = ""
    # A gateway key of the worker's own for web calls that bring none (a key the operator gave
    # this worker alone, e.g. a box key for a worker elsewhere). The agent's key is never read
    # from the environment here: a web tool's call brings it, no other call does, so the worker
    # holds none of the agent's secrets (docs/worker.md "Secrets").
    gateway_key: SecretStr = Field(
        default=SecretStr(""),
        validation_alias=AliasChoices("WORKER_GATEWAY_KEY", "gateway_key"),
    )
    # Processes that run tool calls at the same time (read-only calls of one turn run in parallel).
    concurrency: int = Field(default=2, ge=1, le=64)
    # A pool process is replaced after this many calls, so a leak in a tool cannot grow forever.
    max_tasks_per_child: int = Field(default=200, ge=1)
    # Results are read once by the agent, which deletes each one as it reads it; this is the
    # ceiling for a result nobody reads (its agent gone): file contents do not linger in Redis.
    result_expires_s: int = Field(default=300, ge=60)
    # An unacknowledged (read-only) message whose worker vanished is handed out again after this
    # long. It must exceed the longest read-only call, or a slow read may run twice (harmless, but
    # wasted); it bounds how long a read waits for redelivery after its whole worker died.
    visibility_timeout_s: float = Field(default=300.0, gt=0)
    # How often a worker looks for such messages (Redis transport sweep).
    restore_interval_s: float = Field(default=5.0, gt=0)
    # Calls that carry no limits of their own (never sent by OpenMono's agent) get these.
    default_timeout_s: float = Field(default=120.0, gt=0)
    connect_timeout_s: float = Field(default=2.0, gt=0)

    # The env file of the stack (`OPENMONO_ENV_FILE`, as the agent names it): never readable by
    # a sandboxed command, wherever it is.
    env_file: Path | None = Field(
        default=None,
        validation_alias=AliasChoices("OPENMONO_ENV_FILE", "WORKER_ENV_FILE", "env_file"),
    )

    web: WebToolSettings = Field(default_factory=WebToolSettings)
    codeintel: CodeIntelSettings = Field(default_factory=CodeIntelSettings)
    limits: CommandLimits = Field(default_factory=CommandLimits)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, _WebSwitches(settings_cls), env_settings)

    @model_validator(mode="after")
    def _broker_login(self) -> WorkerSettings:
        self.broker_url = with_password(self.broker_url, self.redis_password.get_secret_value())
        return self

    @property
    def root_paths(self) -> list[Path]:
        """Box mode's allowed roots (`roots`, else the home folder), resolved."""
        raw = [p.strip() for p in self.roots.split(",") if p.strip()] or [str(Path.home())]
        return [Path(os.path.realpath(Path(p).expanduser())) for p in raw]

    @field_validator("data_dir", "artifact_dir", "env_file", mode="after")
    @classmethod
    def _expand(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None

    @property
    def artifacts_root(self) -> Path:
        """Where `<session_id>/<call_id>.txt` artifact files are written."""
        return self.artifact_dir if self.artifact_dir is not None else self.data_dir / "artifacts"

    @property
    def bash_log_dir(self) -> Path:
        """Where background commands write their combined output."""
        return self.data_dir / "bash"


@cache
def codeintel_settings() -> CodeIntelSettings:
    """The code tools' settings, read once per process: the server pool and the edit hook run
    outside a tool's `ToolContext` (tools read `ctx.settings.codeintel`)."""
    return WorkerSettings().codeintel
