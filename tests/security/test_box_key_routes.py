"""Finding 12: box keys could read the operator's /metrics and /slots, and /props with its paths.

At the real gateway (caddy/Caddyfile as shipped) with the real key service and its token tap,
in front of a scripted llama-server that answers `/props` with the recorded real response: a
box key added the way `openmono keys` adds one gets 403 on /metrics and /slots (any spelling of
the path the gateway cleans) and on changing /props, never reaching the upstream; its /props and
/v1/models hold no path, yet the agent's own probe (ModelInfo) still learns the context size and the
template's tool support from it. The operator's key reaches all of them, /props as it is. The
LLM route does not count tokens here: a box's /props goes through the tap all the same.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from openmono.llm import LLMSettings, OpenAICompatModel

from tests.support.keys import KeyedGateway, keyed_gateway
from tests.support.scripted_llm import ScriptedLLM

pytestmark = pytest.mark.integration

OPERATOR_KEY = "operator-key-for-box-route-tests"
# recorded from a real llama-server (tests/fixtures/llama/README.md)
PROPS = json.loads((Path(__file__).parents[1] / "fixtures/llama/props.json").read_text())
MODELS = json.loads((Path(__file__).parents[1] / "fixtures/llama/v1_models.json").read_text())
OPERATOR_ONLY = (
    "/metrics",
    "/slots",
    "/slots/0?action=save",
    "/metrics/",
    "/METRICS",
    "//slots",
    "/%6Detrics",
    "/v1/../slots",
    "/v1/%2e%2e/metrics",
    "/lora-adapters",
    "/",
)
PROPS_SPELLINGS = ("/props", "/%70rops", "/PROPS", "/props?model=x")


@dataclass
class Setup:
    kg: KeyedGateway
    llm: ScriptedLLM
    box: str


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    tmp = tmp_path_factory.mktemp("box-routes")
    llm = ScriptedLLM.start(api_key=OPERATOR_KEY, props_json=PROPS, models_json=MODELS)
    try:
        address = llm.url.removeprefix("http://")
        with keyed_gateway(tmp, api_key=OPERATOR_KEY, llama_upstream=address, tokens=False) as kg:
            box = kg.backend.add("laptop-box-routes", None, None).key
            yield Setup(kg, llm, box)
    finally:
        llm.stop()


def _paths_seen(llm: ScriptedLLM) -> list[str]:
    return [r.path for r in llm.requests]


def test_a_box_key_gets_the_agent_routes_only(setup: Setup) -> None:
    box = {"Authorization": f"Bearer {setup.box}"}
    operator = {"Authorization": f"Bearer {OPERATOR_KEY}"}
    with httpx.Client(base_url=setup.kg.gw.url, timeout=10) as client:
        for method, path in [("GET", p) for p in OPERATOR_ONLY] + [("POST", "/props")]:
            setup.llm.requests.clear()
            resp = client.request(method, path, headers=box, json={} if method == "POST" else None)
            assert resp.status_code == 403, (path, resp.status_code, resp.text)
            assert resp.json()["error"] == "forbidden"
            assert _paths_seen(setup.llm) == [], path  # refused at the gateway
            resp = client.request(method, path, headers=operator)
            assert resp.status_code != 403, (path, resp.text)
            assert _paths_seen(setup.llm), path  # the operator's request reached llama-server
        assert client.get("/v1/models", headers=box).status_code == 200


def test_a_box_key_reads_props_without_paths(setup: Setup) -> None:
    with httpx.Client(base_url=setup.kg.gw.url, timeout=10) as client:
        for path in PROPS_SPELLINGS:
            resp = client.get(path, headers={"Authorization": f"Bearer {setup.box}"})
            assert resp.status_code == 200, (path, resp.text)
            assert "/models/" not in resp.text, path
            seen = resp.json()
            assert "model_path" not in seen
            assert seen["model_alias"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
            assert seen["chat_template"] == PROPS["chat_template"]
        full = client.get("/props", headers={"Authorization": f"Bearer {OPERATOR_KEY}"})
        assert full.json() == PROPS  # the operator's key: as llama-server said it


def test_a_box_key_lists_the_models_without_paths(setup: Setup) -> None:
    with httpx.Client(base_url=setup.kg.gw.url, timeout=10) as client:
        for path in ("/v1/models", "/V1/models", "/v1/%6Dodels"):
            resp = client.get(path, headers={"Authorization": f"Bearer {setup.box}"})
            assert resp.status_code == 200, (path, resp.text)
            assert "/models/" not in resp.text, path
            assert [m["id"] for m in resp.json()["data"]] == ["SmolLM2-135M-Instruct.Q4_1.gguf"]
        full = client.get("/v1/models", headers={"Authorization": f"Bearer {OPERATOR_KEY}"})
        assert full.json() == MODELS


async def test_the_agents_probe_works_with_a_box_key(setup: Setup) -> None:
    settings = LLMSettings(endpoint=setup.kg.gw.url + "/v1", api_key=setup.box)
    async with OpenAICompatModel(settings) as model:
        info = await model.probe()
    assert (info.model, info.n_ctx, info.source) == (
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        512,
        "props",
    )
    assert (info.supports_tools, info.tools_known_from) == (False, "props")
