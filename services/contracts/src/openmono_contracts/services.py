"""The gateway's `/services` document: what this inference box offers, booleans only, no secrets."""

from pydantic import BaseModel, ConfigDict


class ServicesInfo(BaseModel):
    """Body of `GET /services` (docs/architecture.md §3). Extra keys are allowed but must be
    booleans."""

    model_config = ConfigDict(extra="allow")

    llm: bool
    search: bool
    scrape: bool
