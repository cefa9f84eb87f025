"""The SSRF guard (openmono_contracts.netguard) on its own: no socket is opened, no DNS is asked.

Names resolve through a scripted resolver, so every case is decided by the guard's policy alone.
"""

from __future__ import annotations

import asyncio

import pytest
from openmono_contracts import (
    BlockedTargetError,
    ContractError,
    NetGuard,
    NetGuardError,
    UnresolvableHostError,
)

DNS = {
    "public.example": ["93.184.215.14"],
    "public6.example": ["2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "internal.example": ["10.1.2.3"],
    "metadata.example": ["169.254.169.254"],
    "mixed.example": ["93.184.215.14", "192.168.1.10"],
    "loop.example": ["127.0.0.1"],
    "mapped.example": ["::ffff:10.0.0.1"],
    "cgnat.example": ["100.64.3.4"],
}


async def scripted_resolver(host: str, port: int) -> list[str]:
    if host not in DNS:
        raise OSError("no such name")
    return DNS[host]


def guard(*allow: str) -> NetGuard:
    return NetGuard(allow, resolver=scripted_resolver)


# Each of these must be refused with no allow-list (>= 25 cases as the issue asks).
REFUSED = [
    "http://127.0.0.1/",
    "http://127.1/",
    "http://2130706433/",
    "http://0x7f.1/",
    "http://0x7f000001/",
    "http://0177.0.0.1/",
    "http://017700000001/",
    "http://127.000.000.001/",
    "http://localhost/",
    "http://localhost./",
    "http://LOCALHOST:8080/",
    "http://api.localhost/",
    "http://0.0.0.0/",
    "http://0/",
    "http://[::1]/",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[2002:7f00:1::]/",
    "http://[2002:a9fe:a9fe::1]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
    "http://[fe80::1]/",
    "http://[fe80::1%25eth0]/",
    "http://[fc00::1]/",
    "http://[fd12:3456::1]/",
    "http://[ff02::1]/",
    "http://10.0.0.1/",
    "http://172.16.5.4/",
    "http://172.31.255.255/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://169.254.0.1/",
    "http://100.64.0.1/",
    "http://100.127.255.254/",
    "http://192.0.0.8/",
    "http://198.18.0.1/",
    "http://224.0.0.1/",
    "http://239.255.255.250/",
    "http://240.0.0.1/",
    "http://255.255.255.255/",
    "http://user:pw@10.0.0.1/",
    "http://internal.example/",
    "http://metadata.example/",
    "http://mixed.example/",
    "http://loop.example/",
    "http://mapped.example/",
    "http://cgnat.example/",
    "ftp://public.example/",
    "file:///etc/passwd",
    "gopher://public.example:70/",
    "javascript:alert(1)",
    "http:///nohost",
    "http://[not-an-address]/",
]


@pytest.mark.parametrize("url", REFUSED)
async def test_refused(url: str) -> None:
    with pytest.raises(BlockedTargetError) as info:
        await guard().check(url)
    assert isinstance(info.value, ContractError)


def test_list_is_long_enough() -> None:
    assert len(REFUSED) >= 25


@pytest.mark.parametrize("url", ["http://public.example/a", "https://public6.example:8443/"])
async def test_public_names_pass_and_give_the_address_to_pin(url: str) -> None:
    target = await guard().check(url)
    assert target.address == DNS[target.host][0]
    assert not target.is_ip_literal
    assert target.curl_resolve.startswith(f"{target.host}:{target.port}:")
    if ":" in target.address:
        assert target.curl_resolve.endswith(f"[{target.address}]")


async def test_public_literal_passes() -> None:
    target = await guard().check("http://93.184.215.14:8080/x")
    assert (target.address, target.port, target.is_ip_literal) == ("93.184.215.14", 8080, True)


async def test_default_ports() -> None:
    assert (await guard().check("http://public.example/")).port == 80
    assert (await guard().check("https://public.example/")).port == 443


async def test_allow_list_opens_exactly_its_range() -> None:
    g = guard("127.0.0.0/8")
    assert (await g.check("http://127.0.0.1:8000/")).address == "127.0.0.1"
    assert (await g.check("http://loop.example/")).address == "127.0.0.1"
    for url in ("http://10.0.0.1/", "http://localhost/", "http://127.1/", "http://[::1]/"):
        with pytest.raises(BlockedTargetError):
            await g.check(url)


async def test_allow_list_for_a_private_deployment() -> None:
    g = guard("10.0.0.0/8")
    assert (await g.check("http://internal.example/")).address == "10.1.2.3"
    with pytest.raises(BlockedTargetError):
        await g.check("http://metadata.example/")


async def test_unresolvable_name_is_its_own_error() -> None:
    with pytest.raises(UnresolvableHostError):
        await guard().check("http://nowhere.example/")


async def test_slow_resolver_times_out() -> None:
    async def slow(host: str, port: int) -> list[str]:
        await asyncio.sleep(5)
        return ["93.184.215.14"]

    with pytest.raises(UnresolvableHostError):
        await NetGuard(resolver=slow, resolve_timeout_s=0.05).check("http://slow.example/")


@pytest.mark.parametrize("name", ["internal.example", "metadata.example", "mixed.example"])
async def test_errors_never_reveal_what_dns_returned(name: str) -> None:
    with pytest.raises(NetGuardError) as info:
        await guard().check(f"http://{name}/")
    for address in DNS[name]:
        assert address not in str(info.value)
        assert address not in info.value.reason


def test_address_policy_directly() -> None:
    import ipaddress

    g = guard()
    assert g.address_allowed(ipaddress.ip_address("1.1.1.1"))
    assert not g.address_allowed(ipaddress.ip_address("2002::1"))  # is_global says True
    assert not g.address_allowed(ipaddress.ip_address("169.254.169.254"))
