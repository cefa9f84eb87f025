"""Finding 9: any local process could spend a key's rate budget at the key service's /v1/rate,
and anyone holding LLAMA_UPSTREAM_KEY could bill tokens to any key's name through the token tap.

The real gateway (caddy/Caddyfile as shipped, tokens counted) in front of the real key service
and its tap, a scripted llama-server behind them: a process calling /v1/rate or the tap directly,
without the gateway's own secret or with a wrong one, is refused (401), spends nothing, reaches
no replica and leaves no token record; the same requests through the gateway work.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.support.keys import KeyedGateway, keyed_gateway
from tests.support.procs import wait_until
from tests.support.scripted_llm import ScriptedLLM, Turn

pytestmark = pytest.mark.integration

OPERATOR_KEY = "operator-key-for-keys-auth-tests"
CHAT = "/v1/chat/completions"
WRONG = ({}, {"X-OpenMono-Gateway-Secret": "guessed"}, {"X-OpenMono-Gateway-Secret": ""})


@dataclass
class Setup:
    kg: KeyedGateway
    llm: ScriptedLLM


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    tmp = tmp_path_factory.mktemp("keys-auth")
    llm = ScriptedLLM.start([Turn.completion(7)], api_key=OPERATOR_KEY)
    try:
        address = llm.url.removeprefix("http://")
        with keyed_gateway(tmp, api_key=OPERATOR_KEY, llama_upstream=address) as kg:
            yield Setup(kg, llm)
    finally:
        llm.stop()


def _token_records(kg: KeyedGateway) -> list[dict[str, object]]:
    path = kg.usage_dir / "tokens.log"
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line) for line in lines if line.strip()]


def test_nobody_but_the_gateway_spends_a_keys_rate_budget(setup: Setup) -> None:
    kg = setup.kg
    box = kg.backend.add("rated-box", None, "2/min").key
    with httpx.Client(timeout=10) as client:
        for extra in WRONG * 3:  # more than the whole budget
            resp = client.get(
                f"http://{kg.keys_address}/v1/rate",
                headers={"X-OpenMono-Key": "rated-box", "X-OpenMono-Key-Rate": "2", **extra},
            )
            assert resp.status_code == 401, resp.text
            assert resp.json() == {"error": "unauthorized"}
        # the budget is whole: two requests through the gateway pass, the third is limited
        auth = {"Authorization": f"Bearer {box}"}
        statuses = [client.get(f"{kg.gw.url}/v1/models", headers=auth).status_code for _ in "abc"]
    assert statuses == [200, 200, 429]


def test_nobody_but_the_gateway_bills_tokens_to_a_key(setup: Setup) -> None:
    kg, llm = setup.kg, setup.llm
    box = kg.backend.add("billed-box", None, None).key
    body = {"messages": [{"role": "user", "content": "hi"}], "stream": False}
    with httpx.Client(timeout=10) as client:
        for extra in WRONG:
            resp = client.post(
                f"http://{kg.tap_address}{CHAT}",
                json=body,
                headers={
                    # what a process holding llama-server's own key would send
                    "Authorization": f"Bearer {OPERATOR_KEY}",
                    "X-OpenMono-Key": "billed-box",
                    "X-OpenMono-Upstream": llm.url.removeprefix("http://"),
                    **extra,
                },
            )
            assert resp.status_code == 401, resp.text
            assert resp.json() == {"error": "unauthorized"}
        assert llm.chat_requests == []  # no replica was asked
        assert _token_records(kg) == []
        # through the gateway the box's tokens are counted under its name
        resp = client.post(
            f"{kg.gw.url}{CHAT}", json=body, headers={"Authorization": f"Bearer {box}"}
        )
        assert resp.status_code == 200, resp.text
    wait_until(lambda: bool(_token_records(kg)), 5, "the token record")
    [record] = _token_records(kg)
    assert (record["key"], record["prompt_tokens"]) == ("billed-box", 7)


def test_nobody_but_the_gateway_reads_a_keys_firecrawl_usage(setup: Setup) -> None:
    kg = setup.kg
    with httpx.Client(timeout=10) as client:
        for extra in WRONG:
            resp = client.get(
                f"http://{kg.keys_address}/firecrawl/v2/team/credit-usage",
                headers={"X-OpenMono-Key": "operator", **extra},
            )
            assert resp.status_code == 401 and resp.json()["success"] is False, resp.text
        # through the gateway the key's own numbers
        auth = {"Authorization": f"Bearer {OPERATOR_KEY}"}
        resp = client.get(f"{kg.gw.url}/v2/team/token-usage", headers=auth)
    assert resp.status_code == 200 and resp.json()["data"]["remainingTokens"] > 0, resp.text
