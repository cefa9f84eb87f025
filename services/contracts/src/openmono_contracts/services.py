"""The gateway's `/services` document: what this inference box offers, no addresses, no secrets
(it is public and goes out over the relay)."""

from pydantic import BaseModel, ConfigDict


class ReplicaHealth(BaseModel):
    """One LLM replica as the router sees it. `name` is `llama-<n>`, its place in the router's
    replica list (the native stack: `llama-1` is LLAMA_PORT's, then LLAMA_REPLICA_PORT's, ..., or
    the LLAMA_UPSTREAM list in its order); never an address."""

    model_config = ConfigDict(extra="ignore")

    name: str
    healthy: bool


class ServicesInfo(BaseModel):
    """Body of `GET /services` (docs/architecture.md §3). Keys not declared here are allowed but
    must be booleans."""

    model_config = ConfigDict(extra="allow")

    llm: bool
    # each LLM replica behind the router, healthy or not; None (JSON null): the gateway sees no
    # replicas one by one (one replica and no router, compose's DNS balancing, the router not
    # answering within the probe's bound); an older gateway leaves it out
    llm_replicas: list[ReplicaHealth] | None = None
    search: bool
    scrape: bool
    # Firecrawl crawl jobs run in the worker tier and survive a scrape service restart (the
    # gateway sends it whenever it sends `scrape`; an older gateway leaves it out)
    crawl_durable: bool = False
