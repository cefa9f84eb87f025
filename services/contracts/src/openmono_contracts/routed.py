"""The gateway's routed services, declared once (docs/architecture.md §3, "Adding a service").

Each entry says what the gateway routes to one upstream: its `/services` key, its paths, the
variables that name its upstreams, its switch, its health path and how a refusal looks. From this
table come the generated parts of `caddy/Caddyfile` (switch maps, the `/services` template, the
probes and the plain routes), of `compose/docker-compose.yml` (the gateway's environment) and of
`compose/.env.example` (`openmono.stack.gatewayfiles`, `make generate`; a unit test holds that the
checked-in files equal the generation), and the native stack reads it directly (the gateway's
environment, `openmono status`). `ServicesInfo` declares the same keys (a test holds that too).

A route whose shape is its own (the LLM's catch-all with its box-key rules, the Firecrawl API) is
declared here with `plain_route=False` and written by hand in the Caddyfile; everything else about
it (probe, switch, variables) still comes from the entry. Every route asks for the bearer
(the Caddyfile's `authorize`); a plain route refuses in the JSON shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from openmono_contracts.facts import SCRAPE_SWITCH_ENV, SEARCH_SWITCH_ENV


@dataclass(frozen=True)
class Capability:
    """One more `/services` key of a service: asked (at `health_path` of the same upstreams) only
    when the service itself answered, else `false`."""

    key: str
    health_path: str


@dataclass(frozen=True)
class RoutedService:
    """One upstream behind the gateway."""

    # the `/services` key; also the Caddy variable of its switch (`openmono_<key>`)
    key: str
    # prefix of its variables: `<prefix>_UPSTREAM`, `<prefix>_DISCOVERY`, `<prefix>_ACTIVE_CHECKS`
    prefix: str
    # the compose service and port: the default upstream and the name dns discovery resolves
    compose_host: str
    compose_port: int
    health_path: str
    # path matchers of its plain route (ignored when plain_route is False)
    paths: tuple[str, ...] = ()
    # the on/off switch (`/services` false and the route 503 when off); None: always offered
    switch_env: str | None = None
    # the route's request body limit (Caddy size, bytes); docs/operations.md, "Resource bounds"
    body_limit: tuple[str, int] = ("1MiB", 1_048_576)
    # the route is generated (bearer, 503 when switched off, body limit, least_conn, the key
    # never forwarded); False: the Caddyfile's own code routes it
    plain_route: bool = True
    # compose: the operator may name upstreams (and discovery) of their own in compose/.env
    compose_overridable: bool = False
    # its requests pass the key service's token tap: Caddy's active checks cannot (via_tap_on),
    # so they run only while GATEWAY_USAGE_TOKENS is off
    tapped: bool = False
    # the stack's own instance: the StackSettings field of its port (None: the stack runs none)
    native_port_setting: str | None = None
    # the `openmono status` row of that instance
    native_service: str | None = None
    capabilities: tuple[Capability, ...] = field(default=())
    # a `/services` key listing its replicas as its router sees them (a JSON list, or null where
    # no router runs), from the router's status endpoint `<PREFIX>_ROUTER_STATUS`
    replicas_key: str | None = None
    # the comment above its lines in compose/.env.example
    env_doc: str = ""

    @property
    def upstream_env(self) -> str:
        return f"{self.prefix}_UPSTREAM"

    @property
    def discovery_env(self) -> str:
        return f"{self.prefix}_DISCOVERY"

    @property
    def active_checks_env(self) -> str:
        return f"{self.prefix}_ACTIVE_CHECKS"

    @property
    def compose_upstream(self) -> str:
        return f"{self.compose_host}:{self.compose_port}"

    @property
    def router_status_env(self) -> str:
        return f"{self.prefix}_ROUTER_STATUS"

    @property
    def services_keys(self) -> tuple[str, ...]:
        """Its keys in `/services`, in order: its own, its replicas', then its capabilities'."""
        replicas = (self.replicas_key,) if self.replicas_key else ()
        return (self.key, *replicas, *(c.key for c in self.capabilities))


LLM = RoutedService(
    key="llm",
    prefix="LLAMA",
    compose_host="llama-server",
    compose_port=8080,
    health_path="/health",
    body_limit=("32MiB", 33_554_432),
    plain_route=False,
    compose_overridable=True,
    tapped=True,
    native_port_setting="llama_port",
    native_service="llama-server",
    replicas_key="llm_replicas",
    env_doc=(
        "already running llama.cpp servers instead of (native) or besides (compose) the local "
        "one: a\ncomma-separated host:port list, e.g. 127.0.0.1:7474,10.0.0.7:8080 "
        "(docs/scaling.md). Compose:\nalso set LLAMA_DISCOVERY=static and list llama-server:8080 "
        "itself if it should keep serving."
    ),
)

SEARCH = RoutedService(
    key="search",
    prefix="SEARXNG",
    compose_host="searxng",
    compose_port=8080,
    health_path="/healthz",
    paths=("/search*",),
    switch_env=SEARCH_SWITCH_ENV,
    body_limit=("64KiB", 65_536),
    env_doc=(
        "native stack: external SearXNG instances (host:port list); compose runs its own "
        "(profile search)"
    ),
)

SCRAPE = RoutedService(
    key="scrape",
    prefix="SCRAPE",
    compose_host="scrapling",
    compose_port=5000,
    health_path="/health",
    paths=("/scrape*",),
    switch_env=SCRAPE_SWITCH_ENV,
    native_port_setting="scrape_port",
    native_service="scrape",
    # crawl jobs survive a restart (they run in the scrape workers, state in Redis): the scrape
    # service answers 2xx on this path only then
    capabilities=(Capability("crawl_durable", "/health/crawl-durable"),),
    env_doc="native stack: external scrape services (host:port list) instead of starting one",
)

# In `/services` order. The LLM's catch-all route comes after every other route in the Caddyfile.
ROUTED_SERVICES: tuple[RoutedService, ...] = (LLM, SEARCH, SCRAPE)


def services_keys() -> tuple[str, ...]:
    """Every key of `/services`, in the order the gateway writes them."""
    return tuple(key for service in ROUTED_SERVICES for key in service.services_keys)
