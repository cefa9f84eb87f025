"""The copy of llama-server's /props a box key gets (openmono_keys.props), and which requests
the token tap gives it to (finding 12; at the gateway: tests/security/test_box_key_routes.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openmono_keys.props import public_props
from openmono_keys.tap import _is_public


def test_paths_are_taken_out_and_the_rest_stays() -> None:
    template = "{% for m in messages %}\n/not/a/path {{ m }}\n{% endfor %}"
    props = {
        "model_path": "/home/op/models/qwen.gguf",
        "model_alias": "/home/op/models/qwen.gguf",
        "default_generation_settings": {"n_ctx": 4096, "params": {"lora": ["C:\\m\\a.gguf"]}},
        "chat_template": template,
        "chat_template_caps": {"supports_tools": True},
        "extra": ["~/models/x.bin", "plain"],
    }
    out = json.loads(public_props(json.dumps(props).encode()))
    assert out == {
        "model_alias": "qwen.gguf",
        "default_generation_settings": {"n_ctx": 4096, "params": {"lora": ["a.gguf"]}},
        "chat_template": template,
        "chat_template_caps": {"supports_tools": True},
        "extra": ["x.bin", "plain"],
    }


@pytest.mark.parametrize("body", [b"[1]", b"not json", b'"/a/path"'])
def test_a_body_that_is_not_an_object_is_refused(body: bytes) -> None:
    with pytest.raises(ValueError):
        public_props(body)


def test_every_spelling_of_props_and_models_is_filtered() -> None:
    for path in (b"/props", b"/props?model=x", b"/%70rops", b"//props", b"/PROPS", b"/props/"):
        assert _is_public(path), path
    for path in (b"/v1/models", b"/V1/Models", b"//v1//models/", b"/v1/%6Dodels?x=1"):
        assert _is_public(path), path
    for path in (b"/v1/props", b"/propsx", b"/v1/models/x", b"/v1/chat/completions"):
        assert not _is_public(path), path


def test_the_recorded_models_list_keeps_its_shape_without_paths() -> None:
    recorded = (Path(__file__).parents[1] / "fixtures/llama/v1_models.json").read_bytes()
    assert b"/models/" in recorded
    out = json.loads(public_props(recorded))
    assert b"/models/" not in json.dumps(out).encode()
    assert out["data"][0]["id"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert out["models"][0]["name"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert out["data"][0]["meta"] == json.loads(recorded)["data"][0]["meta"]
