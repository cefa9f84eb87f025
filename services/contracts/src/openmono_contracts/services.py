"""The gateway's `/services` document: what this inference box offers, booleans only, no secrets."""

from pydantic import BaseModel, ConfigDict


class ServicesInfo(BaseModel):
    """Body of `GET /services` (docs/architecture.md §3). Extra keys are allowed but must be
    booleans."""

    model_config = ConfigDict(extra="allow")

    llm: bool
    search: bool
    scrape: bool
    # Firecrawl crawl jobs run in the worker tier and survive a scrape service restart (the
    # gateway sends it whenever it sends `scrape`; an older gateway leaves it out)
    crawl_durable: bool = False
