"""Settings of the OpenAI-compatible client; the config layer builds one from its own sources."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class LLMSettings(BaseModel):
    """Where the model is and how patient to be with it.

    `endpoint` may be `http://host:port`, `http://host:port/v1` or a relay URL with a path prefix;
    `/v1/chat/completions` and `/props` are resolved against it (see `normalize_endpoint`).
    """

    model_config = ConfigDict(frozen=True)

    endpoint: str
    api_key: str | None = Field(default=None, repr=False)
    # the gateway CA (inline PEM or a file path, openmono_contracts.trust): trusted alone
    ca: str | None = Field(default=None, repr=False)
    # allow plain http:// beyond loopback (the key and prompts then cross in clear)
    insecure_http: bool = False
    model: str | None = None
    connect_timeout_s: float = Field(default=10.0, gt=0)
    # Prompt processing on a CPU can take minutes for a long context; this covers connect + prompt.
    first_token_timeout_s: float = Field(default=300.0, gt=0)
    stall_timeout_s: float = Field(default=60.0, gt=0)
    probe_timeout_s: float = Field(default=5.0, gt=0)
    max_retries: int = Field(default=3, ge=0, le=10)
    backoff_initial_s: float = Field(default=0.5, ge=0)
    backoff_max_s: float = Field(default=8.0, ge=0)
    retry_after_max_s: float = Field(default=60.0, ge=0)
    recover_text_calls: bool = True
