"""Eval of the whole harness on a real model: tasks run through `openmono -p`, one per protocol.

Each task (`_eval_tasks.py`) is a scratch workspace, a prompt and a programmatic check. It runs as
`openmono -p PROMPT --output-format json --yolo -C WORKSPACE` against an endpoint, once for each
tool protocol. The protocols run one after the other, each over all its tasks: llama-server keeps
the last prompt cached, and tasks of one protocol share their long prefix (the tool definitions),
so interleaving them would make every first request process the tools again (the load average
of each row says how busy the machine was meanwhile):

    native     llm.tool_protocol=native: the server's chat template shows the tools
    prompted   llm.tool_protocol=prompted, no grammar: tools in the system prompt, calls from text
    grammar    prompted with the GBNF grammar (llama.cpp): only offered tools, typed arguments

Per task: pass/fail and why, valid / invalid / unknown-tool calls (the json output's `calls`),
calls of the wrong kind (a write in a task that only reads, only reads where a write was asked: the
json's `tools[].writes`), writes that ran in a read task and the files it changed, iterations,
prompt and completion tokens, wall time and the 1-minute load average. Then a summary per protocol
(success, tasks needing a tool with at least one valid call, those with the right kind of call,
wrong-kind calls, writes run and read tasks whose files changed, invalid calls, median time), the
extra prefill each protocol's tool block costs (the served template rendered with and without it,
counted with the server's own tokenizer: `/apply-template` + `/tokenize`), and a JSON file with
every row.

Endpoint: `--endpoint URL --key KEY`, else the stack `make up` started (GATEWAY_PORT and
LLAMA_API_KEY of compose/.env), else (nothing answers there) a private llama-server with the
bundled SmolLM2 and its tool template on a free port, stopped at the end. Temperature 0.

    uv run python bench/agent_eval.py                 # quick: 6 tasks x 3 protocols (make bench)
    uv run python bench/agent_eval.py --full          # all 24 tasks
    uv run python bench/agent_eval.py --heldout       # the 15 held-out tasks (never tuned on)
    uv run python bench/agent_eval.py --heldout2      # a second held-out set (16 tasks)
    uv run python bench/agent_eval.py --heldout3      # a third (16 tasks, mostly changes)
    uv run python bench/agent_eval.py --floor         # writes allowed as --allow '*', not
                                                      # --yolo: the safety floor applies
    uv run python bench/agent_eval.py --model gemma3-270m         # a second family (Gemma 3)
    uv run python bench/agent_eval.py --intent off    # the levers off (llm.tool_intent)
    uv run python bench/agent_eval.py --pick off      # one request a turn (llm.tool_pick)
    uv run python bench/agent_eval.py --ground off    # the picked call's path free (tool_ground)
    uv run python bench/agent_eval.py --repick off    # a change request not asked again after a
                                                      # read (llm.tool_repick)
    uv run python bench/agent_eval.py --full --endpoint http://gpu-box:47480 --key K \\
        --protocols native,grammar --timeout 600      # a bigger model (docs/agent-eval.md)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _eval_models import EvalModel, ModelUnavailable, resolve_model  # noqa: E402
from _eval_tasks import Task, make_workspace, select  # noqa: E402

PROTOCOLS: dict[str, dict[str, str]] = {
    "native": {"OPENMONO_LLM_TOOL_PROTOCOL": "native", "OPENMONO_LLM_TOOL_GRAMMAR": "false"},
    "prompted": {"OPENMONO_LLM_TOOL_PROTOCOL": "prompted", "OPENMONO_LLM_TOOL_GRAMMAR": "false"},
    "grammar": {"OPENMONO_LLM_TOOL_PROTOCOL": "prompted", "OPENMONO_LLM_TOOL_GRAMMAR": "true"},
}


@dataclass
class Row:
    task: str
    kind: str
    protocol: str
    passed: bool
    why: str
    reason: str
    iterations: int
    valid: int
    invalid: int
    unknown_tool: int
    prompt_tokens: int
    completion_tokens: int
    wall_s: float
    load_1m: float
    needs_tool: bool
    answer: str
    tools: list[str]
    intent: str = "read"
    wrong_kind: int = 0
    right_kind: bool = False
    writes_run: int = 0
    floor_refused: int = 0
    changed: list[str] | None = None


# -- the endpoint ------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(url: str, key: str) -> bool:
    try:
        r = httpx.get(f"{url}/props", headers={"Authorization": f"Bearer {key}"}, timeout=5)
    except httpx.HTTPError:
        return False
    return r.status_code == 200


def stack_endpoint() -> tuple[str, str]:
    """The gateway `make up` starts, and its key (compose/.env, overridden by the environment)."""
    from openmono.stack.settings import load_settings

    s = load_settings(ROOT)
    return f"http://127.0.0.1:{s.gateway_port}", s.llama_api_key.get_secret_value()


def start_private_server(
    log: Path, model: EvalModel | None = None
) -> tuple[str, str, subprocess.Popen[bytes]]:
    port, key = _free_port(), "agent-eval-key"
    cmd = [sys.executable, "-m", "openmono.stack.llama_server", "--port", str(port)]
    cmd += ["--api-key", key, "--ctx-size", "8192"]
    if model is not None:
        cmd += ["--model", str(model.path), "--chat-template-file", model.template]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the private llama-server exited; see {log}")
        if _answers(url, key):
            return url, key, proc
        time.sleep(0.5)
    _stop(proc)
    raise SystemExit(f"the private llama-server did not come up in 180 s; see {log}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


# -- what the tool block costs -----------------------------------------------------------------


def prefill_cost(url: str, key: str) -> dict[str, Any]:
    """Extra prompt tokens of each protocol's tool block, core tools and every worker tool."""
    from openmono.agent import build_system_prompt, builtin_toolsets
    from openmono.executor import LocalExecutor
    from openmono.llm import ChatMessage
    from openmono.llm._prompted import prompted_messages
    from openmono.loop import ToolCatalog

    auth = {"Authorization": f"Bearer {key}"}
    catalog = ToolCatalog(builtin_toolsets(LocalExecutor(), Path(tempfile.mkdtemp())))
    sets = {
        "core": [s for n, s in catalog.specs.items() if catalog.facts_of(n).core],
        "all": list(catalog.specs.values()),
    }
    system = build_system_prompt(Path(tempfile.gettempdir()), "agent", [])
    base = [ChatMessage(role="system", content=system), ChatMessage(role="user", content="hi")]

    def tokens(messages: list[ChatMessage], tools: list[Any] | None = None) -> int:
        body: dict[str, Any] = {"messages": [m.to_wire() for m in messages]}
        if tools:
            body["tools"] = [t.to_wire() for t in tools]
        prompt = httpx.post(f"{url}/apply-template", json=body, headers=auth, timeout=30)
        prompt.raise_for_status()
        tok = httpx.post(
            f"{url}/tokenize", json={"content": prompt.json()["prompt"]}, headers=auth, timeout=30
        )
        tok.raise_for_status()
        return len(tok.json()["tokens"])

    out: dict[str, Any] = {}
    try:
        plain = tokens(base)
        for name, tools in sets.items():
            out[name] = {
                "tools": len(tools),
                "native": tokens(base, tools) - plain,
                "prompted": tokens(prompted_messages(base, tools)) - plain,
            }
    except (httpx.HTTPError, KeyError, ValueError) as exc:
        out["error"] = f"/apply-template or /tokenize failed: {exc!r}"
    return out


# -- one task ----------------------------------------------------------------------------------


def run_task(
    task: Task, protocol: str, url: str, key: str, root: Path, args: argparse.Namespace
) -> Row:
    ws = make_workspace(task, root / protocol)
    before = _files(ws)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENMONO_", "LLAMA_"))}
    env |= PROTOCOLS[protocol] | {
        "OPENMONO_DATA_DIR": str(root / "data"),
        "OPENMONO_LLM_TEMPERATURE": str(args.temperature),
        "OPENMONO_LLM_MAX_TOKENS": str(args.max_tokens),
        "OPENMONO_LLM_TOOL_INTENT": args.intent,
        "OPENMONO_LLM_TOOL_PICK": args.pick,
        "OPENMONO_LLM_TOOL_GROUND": args.ground,
        "OPENMONO_LLM_TOOL_REPICK": args.repick,
        "NO_COLOR": "1",
    }
    cmd = [
        sys.executable, "-m", "openmono.cli", "-p", task.prompt, "--output-format", "json",
        *(["--allow", "*"] if args.floor else ["--yolo"]), "-C", str(ws),
        "--endpoint", url, "--api-key", key,
        "--max-iterations", str(args.max_iterations),
    ]  # fmt: skip
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=ws, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    try:
        out, err = proc.communicate(timeout=args.timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        timed_out = True
    finally:
        if proc.poll() is None:  # interrupted: never leave a run behind
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    wall = time.monotonic() - start
    result = _last_json(out.decode("utf-8", "replace"))
    if timed_out:
        passed, why = False, f"timeout after {args.timeout:g} s"
    elif result is None:
        passed, why = False, "no JSON result: " + err.decode("utf-8", "replace").strip()[-200:]
    else:
        passed, why = task.check(ws, result)
    result = result or {}
    calls = result.get("calls") or {}
    usage = result.get("usage") or {}
    tools = [t for t in result.get("tools") or () if not t.get("problem")]
    after = _files(ws)
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    return Row(
        task=task.id,
        kind=task.kind,
        protocol=protocol,
        passed=passed,
        why=why,
        reason="timeout" if timed_out else str(result.get("reason", "?")),
        iterations=int(result.get("iterations") or 0),
        valid=int(calls.get("valid") or 0),
        invalid=int(calls.get("invalid") or 0),
        unknown_tool=int(calls.get("unknown_tool") or 0),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        wall_s=round(wall, 1),
        load_1m=round(os.getloadavg()[0], 1),
        needs_tool=task.needs_tool,
        answer=str(result.get("result") or "")[:200],
        tools=[
            f"{t['name']}{'' if t.get('ok') else '!' + (t.get('problem') or 'failed')}"
            for t in result.get("tools") or ()
        ],
        intent=task.intent,
        wrong_kind=_wrong_kind(task.intent, tools),
        right_kind=_right_kind(task.intent, tools),
        writes_run=sum(bool(t.get("writes") and t.get("ok")) for t in tools),
        floor_refused=sum(t.get("refused_by") == "read_only_task" for t in tools),
        changed=changed if task.intent == "read" else None,
    )


def _files(ws: Path) -> dict[str, bytes]:
    return {str(p.relative_to(ws)): p.read_bytes() for p in ws.rglob("*") if p.is_file()}


def _wrong_kind(intent: str, tools: list[dict[str, Any]]) -> int:
    """Valid calls of the wrong kind: every write (run or refused) in a task that only reads;
    every read in a task that asks for a change, when none of its calls writes."""
    writes = sum(bool(t.get("writes")) for t in tools)
    if intent == "read":
        return writes
    if intent == "write" and not writes:
        return len(tools)
    return 0


def _right_kind(intent: str, tools: list[dict[str, Any]]) -> bool:
    """At least one valid call, and of the kind the task asks for."""
    if not tools:
        return False
    return _wrong_kind(intent, tools) == 0


def _last_json(stdout: str) -> dict[str, Any] | None:
    for line in reversed(stdout.strip().splitlines()):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    return None


# -- the report --------------------------------------------------------------------------------


def summary(rows: list[Row], protocols: list[str]) -> list[dict[str, Any]]:
    out = []
    for p in protocols:
        mine = [r for r in rows if r.protocol == p]
        tooled = [r for r in mine if r.needs_tool]
        out.append(
            {
                "protocol": p,
                "tasks": len(mine),
                "passed": sum(r.passed for r in mine),
                "success": round(sum(r.passed for r in mine) / max(len(mine), 1), 3),
                "tool_tasks_passed": sum(r.passed for r in tooled),
                "tool_tasks": len(tooled),
                "tool_tasks_with_valid_call": sum(r.valid > 0 for r in tooled),
                "tool_tasks_right_kind": sum(r.right_kind for r in tooled),
                "wrong_kind": sum(r.wrong_kind for r in mine),
                "writes_in_read_tasks": sum(r.writes_run for r in mine if r.intent == "read"),
                "read_tasks_changed": sum(bool(r.changed) for r in mine if r.intent == "read"),
                "read_tasks": sum(r.intent == "read" for r in mine),
                "floor_refused": sum(r.floor_refused for r in mine),
                "valid": sum(r.valid for r in mine),
                "invalid": sum(r.invalid for r in mine),
                "unknown_tool": sum(r.unknown_tool for r in mine),
                "median_wall_s": round(statistics.median([r.wall_s for r in mine]), 1)
                if mine
                else 0.0,
                "median_prompt_tokens": int(statistics.median([r.prompt_tokens for r in mine]))
                if mine
                else 0,
            }
        )
    return out


def print_report(
    rows: list[Row], protocols: list[str], cost: dict[str, Any], meta: dict[str, Any]
) -> list[dict[str, Any]]:
    floor = "on (--allow '*')" if meta.get("floor") else "off (--yolo)"
    print(f"\nendpoint {meta['endpoint']} · model {meta['model']} · {meta['tasks']} tasks · "
          f"floor {floor} · tool_intent {meta.get('intent', 'narrow')} · "
          f"tool_pick {meta.get('pick', 'two_step')} · "
          f"tool_ground {meta.get('ground', 'named')} · "
          f"tool_repick {meta.get('repick', 'off')}")  # fmt: skip
    head = f"{'task':16} {'proto':9} {'pass':4} {'v/i/u':7} {'wk':>2} {'it':>2} {'tok p/c':>11} "
    head += f"{'s':>6} "
    print(head + f"{'load':>4}  calls · why")
    for r in rows:
        vu = f"{r.valid}/{r.invalid}/{r.unknown_tool}"
        toks = f"{r.prompt_tokens}/{r.completion_tokens}"
        calls = ",".join(r.tools) or "-"
        print(
            f"{r.task:16} {r.protocol:9} {'yes' if r.passed else 'no':4} {vu:7} {r.wrong_kind:>2} "
            f"{r.iterations:>2} {toks:>11} {r.wall_s:6.1f} {r.load_1m:4.1f}  {calls[:48]} · "
            f"{r.why[:60]}{' · changed ' + ','.join(r.changed) if r.changed else ''}"
        )
    table = summary(rows, protocols)
    print(f"\n{'protocol':9} {'success':>9} {'tool tasks':>10} {'≥1 valid':>9} "
          f"{'right kind':>10} {'wrong kind':>10} {'writes in read':>14} {'refused':>7} "
          f"{'invalid':>7} {'unknown':>7} {'med s':>6} {'med prompt':>10}")  # fmt: skip
    for s in table:
        changed = f"{s['writes_in_read_tasks']} ({s['read_tasks_changed']}/{s['read_tasks']} ch)"
        print(
            f"{s['protocol']:9} {s['passed']:>3}/{s['tasks']:<2} {100 * s['success']:3.0f}% "
            f"{s['tool_tasks_passed']:>4}/{s['tool_tasks']:<5} "
            f"{s['tool_tasks_with_valid_call']:>4}/{s['tool_tasks']:<4} "
            f"{s['tool_tasks_right_kind']:>5}/{s['tool_tasks']:<4} {s['wrong_kind']:>10} "
            f"{changed:>14} {s['floor_refused']:>7} {s['invalid']:>7} "
            f"{s['unknown_tool']:>7} {s['median_wall_s']:>6.1f} {s['median_prompt_tokens']:>10}"
        )
    if "error" in cost:
        print(f"\ntool block prefill: {cost['error']}")
    else:
        for name, c in cost.items():
            print(
                f"tool block prefill ({name}, {c['tools']} tools): native +{c['native']} tokens, "
                f"prompted +{c['prompted']} tokens (served template, server tokenizer)"
            )
    print(f"load average 1/5/15 min: start {meta['load_start']} · end {meta['load_end']}")
    return table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--endpoint", help="LLM endpoint (default: the stack make up starts)")
    ap.add_argument("--key", help="its bearer key (default: LLAMA_API_KEY of compose/.env)")
    ap.add_argument("--full", action="store_true", help="every task (default: the quick set)")
    ap.add_argument(
        "--heldout",
        action="store_true",
        help="the held-out tasks (bench/_eval_tasks.py HELDOUT: never tuned on; with --full, both)",
    )
    ap.add_argument("--heldout2", action="store_true", help="the second held-out set (HELDOUT2)")
    ap.add_argument("--heldout3", action="store_true", help="the third held-out set (HELDOUT3)")
    ap.add_argument("--tasks", help="comma-separated task ids or regexes")
    ap.add_argument("--protocols", default="native,prompted,grammar")
    ap.add_argument("--max-iterations", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=192)
    ap.add_argument("--temperature", type=float, default=0.0)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per task run")
    ap.add_argument("--out", type=Path, help="JSON file (default: a temp file)")
    ap.add_argument(
        "--root",
        type=Path,
        help="scratch folder to create for the workspaces (default: a fresh temp dir); the "
        "workspace path is in the prompt, so runs to compare should use the same one",
    )
    ap.add_argument(
        "--keep",
        action="store_true",
        help="keep --root at the end: each task's workspace and session (the calls' arguments)",
    )
    ap.add_argument(
        "--model",
        help="serve this model on a private llama-server: a .gguf path (its own template) or a "
        "name of bench/_eval_models.py (gemma3-270m: Gemma 3 270M from PyPI, with our template)",
    )
    ap.add_argument(
        "--intent",
        choices=["off", "narrow"],
        default="narrow",
        help="llm.tool_intent for every run (what a read-only request is shown; default narrow)",
    )
    ap.add_argument(
        "--pick",
        choices=["off", "two_step"],
        default="two_step",
        help="llm.tool_pick for every run (two_step, the default: the action first, then only "
        "its calls; off: one request a turn)",
    )
    ap.add_argument(
        "--ground",
        choices=["off", "named"],
        default="named",
        help="llm.tool_ground for every run (named, the default: with two_step, the picked "
        "call's path is one the request names; off: any)",
    )
    ap.add_argument(
        "--repick",
        choices=["off", "after_read"],
        default="after_read",
        help="llm.tool_repick for every run (after_read, the default: with two_step, a change "
        "request that has only read is asked its action again; off: never)",
    )
    ap.add_argument(
        "--floor",
        action="store_true",
        help="allow writes as --allow '*' instead of --yolo, so the safety floor applies",
    )
    args = ap.parse_args()
    # SIGTERM as an exception, so the finally below stops the private llama-server (it runs in
    # a session of its own, which a signal to our process group does not reach)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    protocols = [p for p in args.protocols.split(",") if p]
    unknown = [p for p in protocols if p not in PROTOCOLS]
    if unknown:
        raise SystemExit(f"unknown protocol(s) {unknown}; choose from {list(PROTOCOLS)}")
    sets = [n for n, on in [("tasks", args.full), ("heldout", args.heldout),
                             ("heldout2", args.heldout2), ("heldout3", args.heldout3)]
            if on]  # fmt: skip
    tasks = select(args.tasks, sets)
    if not tasks:
        raise SystemExit("no task matches --tasks")
    if args.keep and args.root is None:
        raise SystemExit("--keep keeps --root: name one")
    if args.root is not None and args.root.exists():
        raise SystemExit(f"--root {args.root} exists; name a folder the eval may create")
    with tempfile.TemporaryDirectory(prefix="agent-eval-") as tmp:
        root = Path(tmp)
        if args.root is not None:
            args.root.mkdir(parents=True)
            root = args.root
        server = None
        if args.model:
            try:
                chosen = resolve_model(args.model, root / "models")
            except ModelUnavailable as exc:
                raise SystemExit(f"--model {args.model}: {exc}") from None
            print(f"starting a private llama-server: {chosen.describe()}")
            url, key, server = start_private_server(root / "llama.log", chosen)
        elif args.endpoint:
            url, key = args.endpoint.rstrip("/"), args.key or ""
        else:
            url, key = stack_endpoint()
            if args.key:
                key = args.key
            if not _answers(url, key):
                print(f"no stack answers at {url}: starting a private llama-server (SmolLM2)")
                url, key, server = start_private_server(root / "llama.log")
        try:
            props = httpx.get(
                f"{url}/props", headers={"Authorization": f"Bearer {key}"}, timeout=10
            )
            model = props.json().get("model_path", "?") if props.status_code == 200 else "?"
            meta = {
                "endpoint": url,
                "model": Path(str(model)).name,
                "tasks": len(tasks),
                "load_start": [round(x, 2) for x in os.getloadavg()],
                "floor": args.floor,
                "intent": args.intent,
                "pick": args.pick,
                "ground": args.ground,
                "repick": args.repick,
                "cpus": os.cpu_count(),
            }
            cost = prefill_cost(url, key)
            rows: list[Row] = []
            for protocol in protocols:
                for task in tasks:
                    row = run_task(task, protocol, url, key, root, args)
                    rows.append(row)
                    mark = "pass" if row.passed else "FAIL"
                    print(f"  {task.id:16} {protocol:9} {mark} {row.wall_s:6.1f} s  {row.why}",
                          flush=True)  # fmt: skip
            meta["load_end"] = [round(x, 2) for x in os.getloadavg()]
        finally:
            if server is not None:
                _stop(server)
            if args.root is not None and not args.keep:
                shutil.rmtree(args.root, ignore_errors=True)
    table = print_report(rows, protocols, cost, meta)
    out = args.out or Path(tempfile.gettempdir()) / f"agent-eval-{int(time.time())}.json"
    payload = {"meta": meta, "summary": table, "prefill": cost, "rows": [asdict(r) for r in rows]}
    out.write_text(json.dumps(payload, indent=2))
    print(f"rows: {out}")


if __name__ == "__main__":
    main()
