"""The LLM tier of the native stack: the llama-server replicas (`LLAMA_REPLICAS`, or the
`LLAMA_UPSTREAM` list of servers it does not run) and, with more than one, SGLang's router in
front of them (docs/scaling.md, "The router")."""

from __future__ import annotations

from collections.abc import Callable

from openmono_contracts.facts import (
    API_KEY_ENV,
)
from openmono_contracts.routed import LLM

from openmono.stack.errors import StackError
from openmono.stack.health import HttpProbe, LogProbe
from openmono.stack.settings import MAX_REPLICAS, StackSettings
from openmono.stack.spec import HOST, Context, ServiceSpec, cores, routed_upstreams, stack_python
from openmono.stack.upstreams import parse_keys


def _llama_command(ctx: Context, replica: int = 1) -> list[str]:
    s = ctx.settings
    cmd = [
        stack_python(ctx.root),
        "-m",
        "openmono.stack.llama_server",
        "--host",
        HOST,
        "--port",
        str(s.replica_port(replica)),
        "--ctx-size",
        str(s.llama_ctx_size),
        "--parallel",
        str(s.llama_parallel),
    ]
    # on the command line, so a new split (another LLAMA_REPLICAS) restarts the replica
    threads = s.threads_per_replica(cores())
    if threads:
        cmd += ["--threads", str(threads)]
    if s.llama_model:
        cmd += ["--model", s.llama_model]
    if s.llama_chat_template:
        cmd += ["--chat-template-file", s.llama_chat_template]
    return cmd


def _llama_env(ctx: Context) -> dict[str, str]:
    # llama-server checks the internal key the gateway sends, never the client-facing one
    key = ctx.settings.llama_upstream_key.get_secret_value()
    return {API_KEY_ENV: key} if key else {}


def _llama_check(s: StackSettings) -> str:
    # the default model is found by the stack's own interpreter (llama_server.py says how)
    from openmono.stack.llama_server import resolve_model, resolve_template

    try:
        if s.llama_model:
            resolve_model(s.llama_model)
        resolve_template(s.llama_chat_template or None, s.llama_model or None)
    except StackError as exc:
        return str(exc)
    return ""


def own_ports(s: StackSettings) -> dict[str, int]:
    """Every port the stack's own services may bind, by the setting that names it: what a
    replica's or the router's port must not be (the one check both use)."""
    ports = {
        "GATEWAY_PORT": s.gateway_port,
        "GATEWAY_TLS_PORT": s.gateway_tls_port,
        "KEYS_PORT": s.keys_port,
        "KEYS_TAP_PORT": s.keys_tap_port,
        "SCRAPE_PORT": s.scrape_port,
        "REDIS_PORT": s.broker_port,
    }
    ports |= {f"replica {i}": s.replica_port(i) for i in range(1, s.local_replicas + 1)}
    if routed(s):
        ports |= {
            "LLM_ROUTER_PORT": s.llm_router_port,
            "LLM_ROUTER_METRICS_PORT": s.llm_router_metrics_port,
            "LLM_ROUTER_STATUS_PORT": s.llm_router_status_port,
        }
    return ports


def _taken(s: StackSettings, name: str, port: int, also: dict[str, int] | None = None) -> bool:
    """`port` is another of the stack's own ports (and of `also`) than the one `name` names."""
    return port in {p for n, p in (own_ports(s) | (also or {})).items() if n != name}


def _replica_check(replica: int) -> Callable[[StackSettings], str]:
    def check(s: StackSettings) -> str:
        port = s.replica_port(replica)
        where = "LLAMA_PORT" if replica == 1 else f"LLAMA_REPLICA_PORT+{replica - 2}"
        if port > 65535:
            return f"replica {replica} of LLAMA_REPLICAS={s.llama_replicas}: {where} is past 65535"
        if _taken(s, f"replica {replica}", port):
            return (
                f"{where}={port} (replica {replica} of LLAMA_REPLICAS={s.llama_replicas}) is "
                "taken by another of the stack's ports"
            )
        return _llama_check(s) if replica == 1 else ""

    return check


def replicas_note(s: StackSettings) -> str:
    """A warning `up` prints: settings that work, but not as the operator may think."""
    if s.llama_upstream.strip() and s.llama_replicas > 1:
        return (
            f"LLAMA_REPLICAS={s.llama_replicas} is not used: LLAMA_UPSTREAM names the llama "
            "servers, and the stack runs none of its own"
        )
    threads, count = s.threads_per_replica(cores()), s.local_replicas
    if count > 1 and threads * count > cores():
        return (
            f"{count} llama-server replicas x {threads} thread(s) = {threads * count} threads on "
            f"{cores()} core(s): they take turns on the cores, and each generates slower than "
            "one replica alone would (lower LLAMA_REPLICAS or LLAMA_THREADS)"
        )
    return ""


def replica_name(replica: int) -> str:
    """The first replica keeps the single server's name (its pid file, its `status` row)."""
    return "llama-server" if replica == 1 else f"llama-server-{replica}"


def _replica_off(replica: int) -> Callable[[StackSettings], str]:
    def off(s: StackSettings) -> str:
        if s.llama_upstream.strip():
            return f"LLAMA_UPSTREAM names the servers to use ({s.llama_upstream})"
        return f"LLAMA_REPLICAS={s.llama_replicas}"

    return off


def _llama_spec(replica: int) -> ServiceSpec:
    return ServiceSpec(
        name=replica_name(replica),
        enabled=lambda s: s.local_replicas >= replica,
        off_reason=_replica_off(replica),
        command=lambda ctx: _llama_command(ctx, replica),
        port=lambda s: s.replica_port(replica),
        probe=lambda ctx: HttpProbe(f"http://{HOST}:{ctx.settings.replica_port(replica)}/health"),
        start_timeout_s=180,
        env=_llama_env,
        check=_replica_check(replica),
        note=replicas_note if replica == 1 else lambda _s: "",
    )


# One spec per possible replica, each its own keeper-managed process: `up` starts those
# LLAMA_REPLICAS enables and stops the ones past it, like any switched-off service.
LLAMAS: tuple[ServiceSpec, ...] = tuple(_llama_spec(i) for i in range(1, MAX_REPLICAS + 1))
LLAMA = LLAMAS[0]


def routed(s: StackSettings) -> bool:
    """Several llama upstreams: generation goes through the router (one needs none)."""
    return len(routed_upstreams(s, LLM)) > 1


def router_address(s: StackSettings) -> str:
    return f"{HOST}:{s.llm_router_port}"


def _router_env(ctx: Context) -> dict[str, str]:
    s = ctx.settings
    llama = routed_upstreams(s, LLM)
    keys = parse_keys(s.llama_upstream_keys.get_secret_value(), llama)
    # the key the router requires from the gateway and sends on to the replicas: the one the
    # gateway sends upstream (LLAMA_UPSTREAM_KEY, else the client's LLAMA_API_KEY)
    key = s.llama_upstream_key.get_secret_value() or s.llama_api_key.get_secret_value()
    slots = len(llama) * s.llama_parallel
    return {
        "LLM_ROUTER_HOST": HOST,
        "LLM_ROUTER_PORT": str(s.llm_router_port),
        "LLM_ROUTER_METRICS_HOST": HOST,
        "LLM_ROUTER_METRICS_PORT": str(s.llm_router_metrics_port),
        "LLM_ROUTER_API_KEY": key,
        "LLM_ROUTER_WORKERS": ",".join(llama),
        "LLM_ROUTER_WORKER_KEYS": ",".join(f"{where}={k}" for where, k in keys.items()),
        "LLM_ROUTER_POLICY": s.llm_router_policy,
        "LLM_ROUTER_MAX_CONCURRENT": str(s.llm_router_max_concurrent or 4 * slots),
        "LLM_ROUTER_QUEUE_SIZE": str(s.llm_router_queue_size),
        "LLM_ROUTER_QUEUE_TIMEOUT_S": str(s.llm_router_queue_timeout_s),
        "LLM_ROUTER_STATUS_HOST": HOST,
        "LLM_ROUTER_STATUS_PORT": str(s.llm_router_status_port),
        "LLM_ROUTER_PYTHON": stack_python(ctx.root),
    }


def _router_check(s: StackSettings) -> str:
    mine = {
        "LLM_ROUTER_PORT": s.llm_router_port,
        "LLM_ROUTER_METRICS_PORT": s.llm_router_metrics_port,
        "LLM_ROUTER_STATUS_PORT": s.llm_router_status_port,
    }
    for name, port in mine.items():
        # the router's own ports against each other too, whether or not it runs yet
        if _taken(s, name, port, also=mine):
            return f"{name}={port} is taken by another of the stack's ports"
    return ""


ROUTER = ServiceSpec(
    name="llm-router",
    enabled=routed,
    off_reason=lambda s: "one llama-server replica (the gateway reaches it directly)",
    command=lambda ctx: [stack_python(ctx.root), "-m", "openmono.stack.router"],
    port=lambda s: s.llm_router_port,
    # up once it answers its worker API (its /health is 503 while no replica is healthy, and a
    # replica on another box may come later); `openmono status` shows each replica as it sees it
    probe=lambda ctx: LogProbe(ctx.log("llm-router"), "router: listening"),
    start_timeout_s=60,
    env=_router_env,
    more_ports=lambda s: (s.llm_router_metrics_port, s.llm_router_status_port),
    check=_router_check,
)
