"""The services of the native stack, one small declaration each, in start order.

Adding a service = adding one `ServiceSpec` (stack/spec.py) to `SERVICES`: when it is enabled,
how it is started, which port it owns, and how its health is probed. `openmono up` starts the
enabled ones in this order and `openmono down` stops them in reverse. The LLM tier (the
llama-server replicas and the router) is declared in stack/llm_tier.py.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from openmono_contracts.facts import (
    API_KEY_ENV,
    BROKER_URL_ENV,
    GATEWAY_SECRET_ENV,
    REDIS_PASSWORD_ENV,
    SCRAPE_SWITCH_ENV,
    SEARCH_SWITCH_ENV,
    UPSTREAM_KEY_ENV,
)
from openmono_contracts.privatefs import write_private
from openmono_contracts.routed import LLM, ROUTED_SERVICES

from openmono.stack.errors import StackError
from openmono.stack.health import HttpProbe, LogProbe, RedisProbe
from openmono.stack.llm_tier import (
    LLAMAS,
    ROUTER,
    routed,
    router_address,
)
from openmono.stack.settings import StackSettings
from openmono.stack.spec import (
    HOST,
    Context,
    ServiceSpec,
    routed_upstreams,
    stack_python,
    venv_tool,
)
from openmono.stack.upstreams import caddy_key_lines, caddy_list, parse_keys, parse_upstreams

# The switches `openmono setup` writes into the env file, and the target that writes each.
SWITCH_SETUP = {SEARCH_SWITCH_ENV: "search", SCRAPE_SWITCH_ENV: "scraper"}


# Redis holds the broker's keys (database 0: queues, unacknowledged messages, results, the claims
# of calls) and, where the scrape service shares it, the scrape cache (database 1), which keeps
# under its own byte bound (SCRAPE_CACHE_MAX_BYTES, 128 MiB by default). `noeviction`: past
# maxmemory a write is refused with an error, and no key is ever dropped to make room. Any
# eviction policy could drop the broker's keys: allkeys-* any of them, volatile-* those with a
# TTL, which are the results not read yet and the claims that keep a call from running twice.
REDIS_MAXMEMORY = "256mb"
REDIS_BOUNDS = ("--maxmemory", REDIS_MAXMEMORY, "--maxmemory-policy", "noeviction")


def _redis_command(ctx: Context) -> list[str]:
    server = shutil.which("redis-server")
    if not server:
        raise StackError(
            "redis-server is missing: `apt-get install redis-server` (make setup does it as "
            "root), or unset OPENMONO_BROKER_URL to run tools in-process"
        )
    s = ctx.settings
    return [
        server,
        str(_redis_config(ctx)),
        "--bind",
        HOST,
        "--port",
        str(s.broker_port),
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(s.stack_dir),
        *REDIS_BOUNDS,
    ]


def _redis_config(ctx: Context) -> Path:
    """The config file that holds `requirepass` (0600): never the command line, which every local
    user can read (`ps`). Rewritten at each start from REDIS_PASSWORD."""
    password = ctx.settings.redis_password.get_secret_value()
    if not password:
        raise StackError("REDIS_PASSWORD is empty: `openmono up` generates one into the env file")
    if any(c in password for c in '"\\\r\n'):
        raise StackError("REDIS_PASSWORD may not hold quotes, backslashes or line breaks")
    path = ctx.settings.stack_dir / "redis.conf"
    write_private(path, f'requirepass "{password}"\n')  # in a 0700 stack dir (privatefs)
    return path


def _routed_env(s: StackSettings) -> dict[str, str]:
    """Each routed service's variables of the Caddyfile (openmono_contracts.routed)."""
    env: dict[str, str] = {}
    for service in ROUTED_SERVICES:
        upstreams = routed_upstreams(s, service)
        # offered only where something can answer: the stack runs no SearXNG of its own
        offered = s.offered(service) and bool(upstreams)
        # the listed upstreams only (compose finds its replicas by DNS instead)
        env[service.discovery_env] = "static"
        # nothing named: a loopback port where nothing listens (the route is off anyway)
        env[service.upstream_env] = caddy_list(upstreams or [f"{HOST}:9"])
        if service.switch_env is not None:
            env[service.switch_env] = _on(offered)
        # a switched-off upstream is not health-checked (caddy/Caddyfile, active_checks_*); a
        # tapped route's checks cannot pass the tap (via_tap_on)
        active = not s.gateway_usage_tokens if service.tapped else offered
        env[service.active_checks_env] = "on" if active else "off"
    return env


def _gateway_env(ctx: Context) -> dict[str, str]:
    s = ctx.settings
    keys = parse_keys(s.llama_upstream_keys.get_secret_value(), routed_upstreams(s, LLM))
    return {
        # host and port apart: `127.0.0.1:PORT` as the site address would also match on the Host
        # header, and requests through a relay (other Host) would get an empty 200
        "GATEWAY_LISTEN": f":{s.gateway_port}",
        "GATEWAY_TLS_LISTEN": f":{s.gateway_tls_port}",
        "GATEWAY_BIND": HOST,
        **_routed_env(s),
        "GATEWAY_LLAMA_KEYS": caddy_key_lines(keys),
        # several replicas: generation through the router (caddy/Caddyfile, @routed)
        "LLAMA_ROUTER": router_address(s) if routed(s) else "",
        "LLAMA_ROUTER_METRICS": f"{HOST}:{s.llm_router_metrics_port}" if routed(s) else "",
        # the replicas as the router sees them, for /services (router.py's status endpoint)
        "LLAMA_ROUTER_STATUS": f"{HOST}:{s.llm_router_status_port}" if routed(s) else "",
        # what the gateway checks or forwards: here too, so a change restarts it (`runner.up`)
        API_KEY_ENV: s.llama_api_key.get_secret_value(),
        UPSTREAM_KEY_ENV: s.llama_upstream_key.get_secret_value(),
        "GATEWAY_TLS_MODE": s.gateway_tls_mode,
        "GATEWAY_TLS_DOMAIN": s.gateway_tls_domain,
        "GATEWAY_TLS_CERT": s.gateway_tls_cert,
        "GATEWAY_TLS_KEY": s.gateway_tls_key,
        # agent boxes' keys (openmono keys) and the usage records per key
        "GATEWAY_KEYS_DIR": str(s.keys_dir),
        "KEYS_UPSTREAM": f"{HOST}:{s.keys_port}",
        "GATEWAY_USAGE": "on",
        "GATEWAY_ACCESS_LOG": str(s.usage_dir / "access.log"),
        # tokens per key: LLM requests through the key service's tap (caddy/Caddyfile)
        "GATEWAY_USAGE_TOKENS": "on" if s.gateway_usage_tokens else "off",
        "GATEWAY_TOKEN_TAP": f"http://{HOST}:{s.keys_tap_port}",
        # sent to the key service on every /v1/rate and tap request: only Caddy and it hold it
        GATEWAY_SECRET_ENV: s.gateway_secret.get_secret_value(),
    }


def _on(value: bool) -> str:
    return "true" if value else "false"


def _no_broker(_s: StackSettings) -> str:
    return "OPENMONO_BROKER_URL is empty (tools run in-process)"


def _scrape_off(s: StackSettings) -> str:
    if s.scrape_upstream:
        return f"SCRAPE_UPSTREAM names the scrape service(s) to use ({s.scrape_upstream})"
    said = "unset" if s.web_scrape_enabled is None else "false"
    return f"WEB_SCRAPE_ENABLED is {said} (`openmono setup scraper` switches it on)"


def _broker_check(s: StackSettings) -> str:
    if s.openmono_broker_url and not s.openmono_broker_url.startswith("redis://"):
        return f"OPENMONO_BROKER_URL={s.openmono_broker_url!r} is not a redis:// URL"
    return ""


REDIS = ServiceSpec(
    name="redis",
    enabled=lambda s: bool(s.openmono_broker_url),
    off_reason=_no_broker,
    command=_redis_command,
    port=lambda s: s.broker_port,
    probe=lambda ctx: RedisProbe(
        HOST, ctx.settings.broker_port, ctx.settings.redis_password.get_secret_value()
    ),
    start_timeout_s=20,
    # here too, so a new password restarts it (`runner.up` compares what a service started with)
    env=lambda ctx: {REDIS_PASSWORD_ENV: ctx.settings.redis_password.get_secret_value()},
    check=_broker_check,
)


WORKER = ServiceSpec(
    name="worker",
    enabled=lambda s: bool(s.openmono_broker_url),
    off_reason=_no_broker,
    command=lambda ctx: [
        stack_python(ctx.root),
        "-m",
        "openmono_worker",
        "--concurrency",
        "2",
        "--hostname",
        f"openmono-{ctx.settings.broker_port}@%h",
    ],
    port=lambda s: s.broker_port,
    # Celery logs "celery@host ready." once it consumes; `inspect ping` costs a second per probe
    probe=lambda ctx: LogProbe(ctx.log("worker"), " ready."),
    start_timeout_s=60,
    owns_port=False,
    env=lambda ctx: {BROKER_URL_ENV: ctx.settings.openmono_broker_url},
    check=_broker_check,
    private=False,
)


def _page_env(s: StackSettings) -> dict[str, str]:
    """What the scrape service and the scrape worker read pages with, alike."""
    env: dict[str, str] = {}
    if s.scrape_allow_cidrs:
        env["SCRAPE_ALLOW_CIDRS"] = s.scrape_allow_cidrs
    # the scrape cache shares the broker's Redis (another database) when the stack runs one, and
    # crawl jobs then run in the scrape worker (Celery on the broker, their state in its Redis)
    if s.openmono_broker_url:
        env["SCRAPE_CACHE_REDIS_URL"] = f"redis://{HOST}:{s.broker_port}/1"
        env["SCRAPE_CRAWL_BROKER_URL"] = s.openmono_broker_url
    return env


def _scrape_env(ctx: Context) -> dict[str, str]:
    s = ctx.settings
    env = _page_env(s)
    # the Firecrawl API's search asks SearXNG directly, not through the gateway: the first of the
    # SEARXNG_UPSTREAM list (the scrape service takes one URL; the gateway balances the rest)
    if s.search_enabled and parse_upstreams(s.searxng_upstream, "SEARXNG_UPSTREAM"):
        searxng = s.searxng_upstream.replace(",", " ").split()[0].rstrip("/")
        env["SCRAPE_SEARXNG_URL"] = searxng if "://" in searxng else f"http://{searxng}"
    # the Firecrawl json and summary formats ask the box's model through the gateway's LLM route,
    # with the gateway key (so usage and the box-key rules apply as to any client)
    env["SCRAPE_LLM_URL"] = f"http://{HOST}:{s.gateway_port}"
    env["SCRAPE_LLM_API_KEY"] = s.llama_api_key.get_secret_value()
    return env


SCRAPE = ServiceSpec(
    name="scrape",
    # SCRAPE_UPSTREAM set: the gateway uses those scrape services instead of starting one
    enabled=lambda s: s.scrape_enabled and not s.scrape_upstream,
    off_reason=_scrape_off,
    command=lambda ctx: [
        stack_python(ctx.root),
        "-m",
        "openmono_scrape",
        "--host",
        HOST,
        "--port",
        str(ctx.settings.scrape_port),
    ],
    port=lambda s: s.scrape_port,
    probe=lambda ctx: HttpProbe(f"http://{HOST}:{ctx.settings.scrape_port}/health"),
    start_timeout_s=60,
    env=_scrape_env,
)


# The crawl queue's worker: it reads each page of a job with the scrape service's own pipeline,
# in its own process (openmono_scrape.worker), wherever the stack runs both a scrape service and
# the broker its jobs go to.
SCRAPE_WORKER = ServiceSpec(
    name="scrape-worker",
    enabled=lambda s: SCRAPE.enabled(s) and bool(s.openmono_broker_url),
    off_reason=lambda s: _no_broker(s) if not s.openmono_broker_url else _scrape_off(s),
    command=lambda ctx: [
        stack_python(ctx.root),
        "-m",
        "openmono_scrape.worker",
        "--hostname",
        f"openmono-scrape-{ctx.settings.broker_port}@%h",
    ],
    port=lambda s: s.broker_port,
    # Celery logs "celery@host ready." once it consumes
    probe=lambda ctx: LogProbe(ctx.log("scrape-worker"), " ready."),
    start_timeout_s=60,
    owns_port=False,
    env=lambda ctx: _page_env(ctx.settings),
    check=_broker_check,
)


def _keys_env(ctx: Context) -> dict[str, str]:
    s = ctx.settings
    llama = routed_upstreams(s, LLM)
    return {
        "KEYS_HOST": HOST,
        "KEYS_PORT": str(s.keys_port),
        "KEYS_DIR": str(s.keys_dir),
        "KEYS_USAGE_DIR": str(s.usage_dir),
        # the token tap dials only the gateway's LLM upstreams; it runs without token counts
        # too, as the hop that takes the paths out of a box key's /props (caddy/Caddyfile)
        "KEYS_TAP_PORT": str(s.keys_tap_port),
        "KEYS_TAP_UPSTREAMS": caddy_list(llama + ([router_address(s)] if routed(s) else [])),
        # what the gateway must send for /v1/rate and the tap to answer (openmono_keys.secret)
        GATEWAY_SECRET_ENV: s.gateway_secret.get_secret_value(),
    }


KEYS = ServiceSpec(
    name="keys",
    enabled=lambda s: True,
    command=lambda ctx: [sys.executable, "-m", "openmono_keys", "serve"],
    port=lambda s: s.keys_port,
    probe=lambda ctx: HttpProbe(f"http://{HOST}:{ctx.settings.keys_port}/health"),
    start_timeout_s=30,
    env=_keys_env,
    more_ports=lambda s: (s.keys_tap_port,),
)

TLS_MODES = ("internal", "files", "acme")


def _gateway_check(s: StackSettings) -> str:
    mode = s.gateway_tls_mode
    if mode not in TLS_MODES:
        return f"GATEWAY_TLS_MODE={mode!r} is not one of {', '.join(TLS_MODES)}"
    if mode in ("files", "acme") and not s.gateway_tls_domain:
        return f"GATEWAY_TLS_MODE={mode} needs GATEWAY_TLS_DOMAIN (the name clients connect to)"
    if mode == "files":
        for name, value in (
            ("GATEWAY_TLS_CERT", s.gateway_tls_cert),
            ("GATEWAY_TLS_KEY", s.gateway_tls_key),
        ):
            if not value or not Path(value).expanduser().is_file():
                return f"GATEWAY_TLS_MODE=files needs {name} to name a file (it is {value!r})"
    return ""


GATEWAY = ServiceSpec(
    name="gateway",
    enabled=lambda s: True,
    command=lambda ctx: [
        venv_tool("caddy", ctx.root),
        "run",
        "--config",
        str(ctx.root / "caddy" / "Caddyfile"),
        "--adapter",
        "caddyfile",
    ],
    port=lambda s: s.gateway_port,
    probe=lambda ctx: HttpProbe(f"http://{HOST}:{ctx.settings.gateway_port}/health"),
    start_timeout_s=30,
    env=_gateway_env,
    more_ports=lambda s: (s.gateway_tls_port,),
    check=_gateway_check,
)

SERVICES: tuple[ServiceSpec, ...] = (
    REDIS,
    WORKER,
    *LLAMAS,
    ROUTER,
    SCRAPE,
    SCRAPE_WORKER,
    KEYS,
    GATEWAY,
)
