"""`openmono keys ...` and `openmono setup join --name` as a user runs them, against the real native
stack (`openmono up`: Caddy, the key service, an SSE upstream standing in for llama-server)."""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.native_stack import join_exports, native_stack_env, run_openmono
from tests.support.sse_upstream import sse_upstream

pytestmark = pytest.mark.integration

OPERATOR = "operator-key-of-this-test"


@pytest.fixture
def stack_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    with native_stack_env(tmp_path) as env:
        env["LLAMA_API_KEY"] = OPERATOR
        yield env


def _keys(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    done = run_openmono(["keys", *args, "--via", "native"], env, timeout=60)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


def test_mistakes_exit_2_with_a_clear_line_and_change_nothing(stack_env: dict[str, str]) -> None:
    code, out, err = _keys(stack_env, "add", "laptop-anna")
    assert code == 0, err
    key = out.splitlines()[1]
    assert key.startswith("omk_")
    assert "not running" in err  # no gateway: the key applies when it starts
    for args, words in [
        (("add", "laptop-anna"), "exists"),
        (("add", "Laptop_Anna"), "a-z, 0-9"),
        (("add", "x" * 41), "1-40"),
        (("add", "operator"), "operator"),
        (("revoke", "nobody"), "no key named"),
        (("rotate", "nobody"), "no key named"),
        (("add", "b", "--rate", "fast"), "--rate"),
        (("add", "b", "--expires", "-1"), "--expires"),
        (("usage", "--since", "yesterday"), "--since"),
    ]:
        code, out, err = _keys(stack_env, *args)
        assert code == 2, (args, out, err)
        assert err.startswith("error: ") and words in err, (args, err)
    code, out, _ = _keys(stack_env, "list", "--json")
    assert code == 0
    assert [k["name"] for k in json.loads(out)["keys"]] == ["laptop-anna"]
    assert key not in out and key[4:] not in out


def _tls(pem: str) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cadata=pem)
    ctx.check_hostname = False
    return ctx


def test_keys_on_the_running_native_stack(stack_env: dict[str, str], tmp_path: Path) -> None:
    with sse_upstream(tmp_path / "sse.log") as upstream:
        stack_env["LLAMA_UPSTREAM"] = upstream
        up = run_openmono(["up"], stack_env)
        assert up.returncode == 0, up.stdout + up.stderr
        assert "keys          healthy in" in up.stdout
        plain = f"http://127.0.0.1:{stack_env['GATEWAY_PORT']}"
        tls_url = f"https://127.0.0.1:{stack_env['GATEWAY_TLS_PORT']}"

        code, out, err = _keys(stack_env, "add", "laptop-anna", "--rate", "100/min")
        assert code == 0, err
        anna = out.splitlines()[1]
        joined = run_openmono(
            ["setup", "join", "--relay-url", tls_url, "--name", "laptop-ben"], stack_env
        )
        assert joined.returncode == 0, joined.stderr
        lines = join_exports(joined.stdout)
        ben, ca = lines["key"], lines["ca"]
        assert ben.startswith("omk_") and ben != anna
        assert ben not in joined.stderr  # printed once, in the lines

        def status(key: str, url: str = plain) -> int:
            verify = _tls(ca) if url.startswith("https") else True
            headers = {"Authorization": f"Bearer {key}"}
            return httpx.get(f"{url}/v1/models", headers=headers, verify=verify).status_code

        for url in (plain, tls_url):
            assert [status(k, url) for k in (anna, ben, OPERATOR)] == [200, 200, 200]
        code, _, err = _keys(stack_env, "revoke", "laptop-anna")
        assert code == 0, err
        assert [status(anna, url) for url in (plain, tls_url)] == [401, 401]
        assert status(ben, tls_url) == 200
        rotated = _keys(stack_env, "rotate", "laptop-ben")[1].splitlines()[1]
        assert status(ben) == 401 and status(rotated) == 200
        # tokens per key: the native stack runs the key service's token tap on the LLM route
        # (the stand-in counts a body byte as a prompt token and sends 8 events)
        body = b'{"messages":[{"role":"user","content":"hi"}],"stream":true}'
        chat = httpx.post(
            f"{plain}/v1/chat/completions",
            content=body,
            headers={"Authorization": f"Bearer {rotated}", "Content-Type": "application/json"},
        )
        assert chat.status_code == 200 and chat.text.rstrip().endswith("[DONE]")

        code, out, _ = _keys(stack_env, "list", "--json")
        listing = json.loads(out)
        assert [k["name"] for k in listing["keys"]] == ["laptop-ben"]
        used = {(r["key"], r["route"]): r["requests"] for r in listing["usage"]["rows"]}
        assert used["laptop-anna", "/v1/models"] == 2
        assert used["laptop-ben", "/v1/models"] == 4  # the rotated key keeps the name
        assert used["operator", "/v1/models"] == 2
        code, out, _ = _keys(stack_env, "usage", "--since", "1h")
        assert code == 0 and "laptop-ben" in out and "/v1/models" in out
        chat_row = next(line for line in out.splitlines() if "/v1/chat/completions" in line)
        assert chat_row.split()[0] == "laptop-ben" and f"{len(body)}/8" in chat_row, out
        code, out, _ = _keys(stack_env, "list")
        assert code == 0 and "laptop-ben" in out and "operator (LLAMA_API_KEY)" in out
