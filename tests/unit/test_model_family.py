"""`openmono doctor` names the model family and whose chat template it gets (issue 42 item 4):
told from the recorded real /props (SmolLM2's GGUF template), OpenMono's shipped template, a real
Qwen3 template, and names alone."""

from __future__ import annotations

import json
from pathlib import Path

from openmono.llm._family import family_of, template_owner

LOCAL = Path(__file__).resolve().parents[1] / "fixtures" / "llama"
TEMPLATES = Path(__file__).resolve().parents[2] / "agent/src/openmono/stack/templates"
OURS = TEMPLATES / "smollm2-tools.jinja"


def test_the_recorded_smollm2_server() -> None:
    props = json.loads((LOCAL / "props.json").read_text())
    template = props["chat_template"]
    found = family_of(props.get("model_alias") or props["model_path"], template)
    assert (found.family, found.style) == ("SmolLM", "ChatML")
    assert "smollm2-135m-instruct" in found.evidence
    assert template_owner(template).startswith("the model's own")


def test_our_shipped_template_is_named_ours() -> None:
    text = OURS.read_text()
    assert template_owner(text) == (
        "OpenMono's (openmono/stack/templates/smollm2-tools.jinja, it renders the tools)"
    )
    assert family_of("/models/model.gguf", text).style == "ChatML"


def test_the_second_family_gemma_and_its_template() -> None:
    # the gemma3-270m wheel's GGUF has no template: llama-server shows ours (bench/_eval_models)
    text = (TEMPLATES / "gemma3-tools.jinja").read_text()
    assert "gemma3-tools.jinja" in template_owner(text)
    found = family_of("/tmp/models/gemma-3-270m-q4_k_m.gguf", text)
    assert (found.family, found.style) == ("Gemma", "Gemma")
    assert family_of("/models/model.gguf", text).family == "Gemma"  # its markers tell alone


def test_chatml_alone_does_not_name_a_family_but_distinct_markers_do() -> None:
    qwen = (LOCAL / "qwen3_xml_tools.jinja").read_text()
    assert family_of("model.gguf", qwen).family is None  # ChatML: SmolLM2, Qwen, Hermes share it
    assert family_of("Qwen3-0.6B-Q8_0.gguf", qwen).family == "Qwen"
    llama3 = "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>' }}"
    assert family_of("model.gguf", llama3).describe() == (
        "Llama · Llama 3 template (from the chat template's markers)"
    )
    assert family_of("gemma-3-1b-it.gguf", None).family == "Gemma"
    assert family_of("phi-4-mini.gguf", None).family == "Phi"
    assert family_of("graphite.gguf", None).family is None  # not "phi" inside a word
    assert template_owner(None).startswith("unknown")
