"""The relay carries only TLS: a real `openmono -p` run through a recording TCP relay (standing in
for frps + frpc) to the real Caddy gateway's HTTPS listener, the scripted LLM behind it.

What a relay operator could read (every byte, both directions) holds neither the key, nor the
prompt, nor the contents of the file the agent read with FileRead; the same run over the plain
listener shows all three, so the check can fail. A man in the middle with another certificate (a
second gateway with its own CA) is refused with a message that says what to do, before anything is
sent; plain http:// beyond loopback is refused before any connection.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from openmono_contracts import trust

from tests.support.cli import CliResult, run_openmono
from tests.support.gateway import Gateway, gateway
from tests.support.scripted_llm import Call, ScriptedLLM, Turn
from tests.support.tcp_relay import Relay, tcp_relay

pytestmark = pytest.mark.integration

KEY = "relay-test-key-9c41d2e8b7"
PROMPT = "Summarise the launch codes kept in vault.txt for me"
SECRET = "VAULT-CONTENT-7d1f0a: the codes are 0000 and the deploy token is hunter2"

ScriptedFactory = Callable[..., ScriptedLLM]


def _agent_env(tmp: Path, endpoint: str, ca: str | None) -> dict[str, str]:
    """An agent box's environment: its own HOME and data dir, the join lines, nothing of ours."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENMONO_", "LLAMA_"))}
    env.update(
        HOME=str(tmp),
        OPENMONO_DATA_DIR=str(tmp / "data"),
        OPENMONO_LLM_ENDPOINT=endpoint,
        OPENMONO_LLM_API_KEY=KEY,
    )
    if ca is not None:
        env["OPENMONO_GATEWAY_CA"] = ca
    return env


def _agent(tmp: Path, endpoint: str, ca: str | None, *extra: str) -> CliResult:
    env = _agent_env(tmp, endpoint, ca) | {"OPENMONO_LLM_MAX_RETRIES": "0"}
    return run_openmono(["-p", PROMPT, *extra], env, tmp / "ws")


@pytest.fixture
def box(tmp_path: Path, scripted_llm: ScriptedFactory) -> Iterator[tuple[Gateway, ScriptedLLM]]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "vault.txt").write_text(SECRET + "\n")
    llm = scripted_llm(api_key=KEY)
    with gateway(
        tmp_path / "gw", api_key=KEY, llama_upstream=llm.url.removeprefix("http://")
    ) as gw:
        yield gw, llm


def _script(llm: ScriptedLLM) -> None:
    llm.add(
        Turn(tool_calls=[Call("FileRead", {"file_path": "vault.txt"})]),
        Turn(text="The file holds two codes; I will not repeat them."),
    )


def _leaks(relay: Relay) -> list[str]:
    seen = relay.recorded()
    return [
        name
        for name, s in (("key", KEY), ("prompt", PROMPT), ("file", SECRET))
        if s.encode() in seen
    ]


def test_the_relay_sees_only_ciphertext(tmp_path: Path, box: tuple[Gateway, ScriptedLLM]) -> None:
    gw, llm = box
    _script(llm)
    tls_port = int(gw.tls_url.rsplit(":", 1)[1])
    with tcp_relay(tls_port) as relay:
        run = _agent(tmp_path, relay.tls_url, gw.ca_pem)
    assert run.code == 0, run.out + run.err
    assert "I will not repeat them" in run.out
    # the run really carried all three, through the relay, to the model
    assert relay.connections >= 1 and len(relay.recorded()) > 2000
    assert PROMPT in str(llm.chat_requests[0].json["messages"])
    assert SECRET in str(llm.chat_requests[1].json["messages"])
    assert llm.chat_requests[0].headers.get("authorization") == f"Bearer {KEY}"
    assert _leaks(relay) == []


def test_the_same_run_over_plain_http_shows_everything(
    tmp_path: Path, box: tuple[Gateway, ScriptedLLM]
) -> None:
    """The control: the recording and the search for the secrets do work."""
    gw, llm = box
    _script(llm)
    plain_port = int(gw.url.rsplit(":", 1)[1])
    with tcp_relay(plain_port) as relay:  # a loopback relay: allowed without --insecure-http
        run = _agent(tmp_path, relay.url, None)
    assert run.code == 0, run.out + run.err
    assert _leaks(relay) == ["key", "prompt", "file"]


def test_a_man_in_the_middle_with_another_certificate_is_refused(
    tmp_path: Path, box: tuple[Gateway, ScriptedLLM]
) -> None:
    gw, llm = box
    _script(llm)
    # another gateway, another internal CA: it would forward everything to the same model
    mitm_llm = llm.url.removeprefix("http://")
    with gateway(tmp_path / "mitm", api_key=KEY, llama_upstream=mitm_llm) as mitm:
        assert mitm.ca_pem != gw.ca_pem
        mitm_port = int(mitm.tls_url.rsplit(":", 1)[1])
        with tcp_relay(mitm_port) as relay:
            run = _agent(tmp_path, relay.tls_url, gw.ca_pem)
    assert run.code != 0
    assert "OPENMONO_GATEWAY_CA does not vouch for" in run.err
    assert "man in the middle" in run.err and "openmono setup join" in run.err
    assert "Traceback" not in run.err
    assert llm.chat_requests == []  # nothing was sent: the handshake failed first
    assert _leaks(relay) == []


def test_no_anchor_for_a_private_ca_says_what_to_set(
    tmp_path: Path, box: tuple[Gateway, ScriptedLLM]
) -> None:
    gw, llm = box
    run = _agent(tmp_path, gw.tls_url, None)
    assert run.code != 0
    assert "set OPENMONO_GATEWAY_CA" in run.err and "Traceback" not in run.err
    assert llm.chat_requests == []


def test_a_damaged_anchor_is_a_clear_error(
    tmp_path: Path, box: tuple[Gateway, ScriptedLLM]
) -> None:
    gw, _ = box
    bad = gw.ca_pem.replace("\n", "\n" + "A", 2)
    run = _agent(tmp_path, gw.tls_url, bad)
    assert run.code != 0
    assert "OPENMONO_GATEWAY_CA" in run.err and "Traceback" not in run.err
    missing = _agent(tmp_path, gw.tls_url, str(tmp_path / "no-such-ca.pem"))
    assert "neither a PEM certificate nor a readable file" in missing.err


def test_plain_http_beyond_loopback_is_refused_before_any_connection(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    # never resolved nor dialled: the refusal comes first
    run = _agent(tmp_path, "http://relay.example.invalid:7000", None)
    assert run.code != 0
    assert "refusing plain http://" in run.err and "--insecure-http" in run.err
    assert "Traceback" not in run.err


def test_a_real_gateway_ca_inline_or_as_a_file(
    tmp_path: Path, box: tuple[Gateway, ScriptedLLM]
) -> None:
    gw, _ = box
    pem = gw.ca_pem
    inline = trust.load_anchor(pem)
    assert inline is not None
    (tmp_path / "ca.pem").write_text(pem)
    assert trust.load_anchor(str(tmp_path / "ca.pem")) == inline
    ctx = trust.anchored_context(inline)
    assert ctx.verify_mode == ssl.CERT_REQUIRED
    assert ctx.minimum_version >= ssl.TLSVersion.TLSv1_2
    assert len(ctx.get_ca_certs()) == 1  # that CA alone, not the system store


def _doctor(tmp: Path, endpoint: str, ca: str) -> CliResult:
    return run_openmono(["doctor"], _agent_env(tmp, endpoint, ca), tmp / "ws", timeout=60)


def test_doctor_checks_the_gateway_through_the_relay_with_its_ca(
    tmp_path: Path, box: tuple[Gateway, ScriptedLLM]
) -> None:
    gw, _ = box
    tls_port = int(gw.tls_url.rsplit(":", 1)[1])
    with (
        tcp_relay(tls_port) as relay,
        gateway(tmp_path / "other", api_key=KEY, llama_upstream="127.0.0.1:9") as other,
    ):
        good = _doctor(tmp_path, relay.tls_url, gw.ca_pem)
        assert "/services: llm=true" in good.out, good.out + good.err
        assert "/health → 200" in good.out
        wrong = _doctor(tmp_path, relay.tls_url, other.ca_pem)
    assert wrong.code != 0
    assert "does not vouch for" in wrong.out and "Traceback" not in wrong.out + wrong.err
    assert _leaks(relay) == []
