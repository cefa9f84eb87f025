"""Which model family is served, and whose chat template: what `openmono doctor` names.

Told from what the server says, never guessed further: the chat template's turn markers (a family's
template is its clearest fingerprint: ChatML's `<|im_start|>`, Llama 3's `<|start_header_id|>`,
Gemma's `<start_of_turn>`, ...) and the model's name or path (`SmolLM2`, `qwen2.5-coder`). ChatML
is shared by several families (SmolLM2, Qwen, Hermes), so the name decides among them; a template
alone says only "ChatML". The template is OpenMono's own when it carries our marker (the ones
shipped in `openmono/stack/templates/`), else the model's own (the GGUF's, or a file the operator
gave llama-server).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# (family, pattern on the lower-cased model name or path), most specific first
_NAMES: tuple[tuple[str, str], ...] = (
    ("SmolLM", r"smollm"),
    ("Qwen", r"qwen|qwq"),
    ("DeepSeek", r"deepseek"),
    ("Llama", r"llama|codellama"),
    ("Gemma", r"gemma"),
    ("Phi", r"(?<![a-z])phi[-_.0-9]"),
    ("Mistral", r"mistral|mixtral|codestral|devstral|ministral"),
    ("Granite", r"granite"),
    ("Hermes", r"hermes"),
    ("Falcon", r"falcon"),
    ("OLMo", r"olmo"),
    ("GLM", r"(?<![a-z])glm"),
)
# (template style, marker in the template text)
_STYLES: tuple[tuple[str, str], ...] = (
    ("ChatML", "<|im_start|>"),
    ("Llama 3", "<|start_header_id|>"),
    ("Gemma", "<start_of_turn>"),
    ("DeepSeek", "<｜User｜>"),
    ("Phi-3", "<|end|>"),
    ("Mistral [INST]", "[INST]"),
    ("Granite", "<|start_of_role|>"),
)
# families whose own templates use a style no other family here uses
_STYLE_FAMILY = {"Llama 3": "Llama", "Gemma": "Gemma", "DeepSeek": "DeepSeek", "Phi-3": "Phi",
                 "Granite": "Granite"}  # fmt: skip
OURS = re.compile(r"openmono:tool_protocol=|OpenMono ships it")
_OUR_NAME = re.compile(r"openmono:template=([\w.-]+)")


@dataclass(frozen=True)
class ModelFamily:
    """`family`: None when neither the name nor the template tells; `style`: the template's turn
    markers; `evidence`: what told it."""

    family: str | None
    style: str | None
    evidence: str

    def describe(self) -> str:
        name = self.family or "unknown family"
        style = f" · {self.style} template" if self.style else ""
        return f"{name}{style} ({self.evidence})"


def family_of(model: str, template: str | None) -> ModelFamily:
    """The family `model` (its name or path) and `template` (its chat template) belong to."""
    base = model.replace("\\", "/").rsplit("/", 1)[-1].lower()
    by_name = next((f for f, pattern in _NAMES if re.search(pattern, base)), None)
    style = None
    if template:
        style = next((s for s, marker in _STYLES if marker in template), None)
    if by_name is not None:
        return ModelFamily(by_name, style, f"from the model name {base!r}")
    if style is not None and style in _STYLE_FAMILY:
        return ModelFamily(_STYLE_FAMILY[style], style, "from the chat template's markers")
    if style is not None:
        return ModelFamily(None, style, f"the {style} template is shared by several families")
    return ModelFamily(None, None, "neither the model name nor a chat template tells")


def template_owner(template: str | None) -> str:
    """Whose chat template the server renders with."""
    if template is None:
        return "unknown (the server shows no chat template: not llama.cpp's /props)"
    if OURS.search(template):
        named = _OUR_NAME.search(template)
        where = "openmono/stack/templates/" + (named.group(1) if named else "")
        return f"OpenMono's ({where}, it renders the tools)"
    return "the model's own (from the GGUF, or a file given to llama-server)"
