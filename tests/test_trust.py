"""Which endpoints a run may call: skylos's rules plus --allow-host."""

from __future__ import annotations

import ipaddress
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLE
from hypothesis import example, given
from hypothesis import strategies as st

from behavegate.errors import RunError
from behavegate.evidence.trust import (
    Endpoint,
    choose_endpoint,
    fingerprint,
    is_isolated_address,
    is_loopback_host,
    load_credentials,
    pin_allowed_host,
)


def choose(url: str | None, *, override: str | None = None, **flags: Any) -> Endpoint:
    defaults: dict[str, Any] = {"allow_remote": False, "allow_contract_endpoint": False, "authenticated": False}
    defaults.update(flags)
    return choose_endpoint(url, "m", override=override, **defaults)


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST", "127.0.0.1", "127.5.6.7", "::1"])
def test_literal_loopback_hosts(host: str) -> None:
    assert is_loopback_host(host)


@pytest.mark.parametrize("host", ["127.1", "localhost.", "0.0.0.0", "::ffff:127.0.0.1", "2130706433", "example.com"])
def test_everything_else_is_remote(host: str) -> None:
    assert not is_loopback_host(host)


@pytest.mark.parametrize(
    ("url", "flags", "message"),
    [
        ("http://127.0.0.1:8000/v1", {}, "require --allow-contract-endpoint"),
        ("https://agent.example.com/v1", {"allow_contract_endpoint": True}, "must be supplied with trusted --endpoint"),
        ("ftp://127.0.0.1/v1", {"allow_contract_endpoint": True}, "must use http or https"),
        ("http://user:pw@127.0.0.1/v1", {"allow_contract_endpoint": True}, "must not contain credentials"),
        ("http://127.0.0.1/v1#frag", {"allow_contract_endpoint": True}, "must not contain a fragment"),
        ("http://127.0.0.1:99999/v1", {"allow_contract_endpoint": True}, "invalid port"),
        (
            "http://127.0.0.1/v1",
            {"allow_contract_endpoint": True, "authenticated": True},
            "require a trusted --endpoint override",
        ),
    ],
)
def test_contract_endpoints_need_consent_and_stay_local(url: str, flags: dict[str, Any], message: str) -> None:
    with pytest.raises(RunError, match=message):
        choose(url, **flags)


def test_remote_overrides_need_allow_remote_and_https() -> None:
    with pytest.raises(RunError, match="require --allow-remote"):
        choose(None, override="https://agent.example.com/v1")
    with pytest.raises(RunError, match="must use https"):
        choose(None, override="http://agent.example.com/v1", allow_remote=True)
    endpoint = choose(None, override="https://agent.example.com/v1", allow_remote=True)
    assert endpoint.source == "cli_override"


@pytest.mark.parametrize("flags", [{}, {"allow_remote": True}])
def test_plain_http_to_a_service_host_is_pointed_at_allow_host_not_allow_remote(flags: dict[str, Any]) -> None:
    """Plain http to a named host is a CI service container: --allow-remote only leads on to "must
    use https". skylos's words stay the error; what a person reads names --allow-host."""
    with pytest.raises(RunError) as refused:
        choose(None, override="http://agent:8765/v1/chat/completions", **flags)
    assert str(refused.value).startswith("remote agent endpoints ")
    assert "--allow-host agent " in refused.value.human
    with pytest.raises(RunError) as contract_named:
        choose("http://agent:8765/v1/chat/completions")
    assert "--allow-host agent " in contract_named.value.human
    with pytest.raises(RunError) as https:  # an https endpoint is remote: no service-host hint
        choose(None, override="https://agent.example.com/v1")
    assert "--allow-host" not in https.value.human


def test_fingerprint_canonicalizes_scheme_host_and_default_port() -> None:
    assert fingerprint("HTTP://LOCALHOST:80/v1") == fingerprint("http://localhost/v1")
    assert fingerprint("http://[::1]:8000") == fingerprint("http://[::1]:8000/")


def test_credentials_come_from_a_named_variable_only() -> None:
    assert load_credentials("TOKEN", {"TOKEN": "abc"}).header() == "Bearer abc"  # type: ignore[union-attr]
    for name, env, message in [
        ("1X", {}, "valid environment variable name"),
        ("T", {}, "is not set"),
        ("T", {"T": "a\nb"}, "invalid header characters"),
        ("T", {"T": "x" * 8193}, "exceeds 8192"),
    ]:
        with pytest.raises(RunError, match=message):
            load_credentials(name, env)
    assert "abc" not in repr(load_credentials("TOKEN", {"TOKEN": "abc"}))


def test_allowed_host_is_pinned_to_the_private_address_it_resolved_to() -> None:
    endpoint = choose("http://agent:8080/v1/chat/completions", allow_hosts=["agent"])
    pinned = pin_allowed_host(endpoint, lambda host, port: ["172.18.0.5"])
    assert pinned.connect_url == "http://172.18.0.5:8080/v1/chat/completions"
    assert pinned.host_header == "agent:8080"
    assert pinned.url == "http://agent:8080/v1/chat/completions"


@pytest.mark.parametrize("addresses", [["8.8.8.8"], ["10.0.0.2", "93.184.216.34"], ["0.0.0.0"]])
def test_allowed_host_resolving_to_a_public_address_is_refused(addresses: list[str]) -> None:
    endpoint = choose("http://agent:8080/v1", allow_hosts=["agent"])
    with pytest.raises(RunError, match="outside the allowed private ranges"):
        pin_allowed_host(endpoint, lambda host, port: addresses)


ADDRESS_POLICY = [
    # allowed: loopback, RFC 1918, RFC 4193 unique local, and IPv4-mapped forms of them
    ("127.0.0.1", True),
    ("127.255.255.254", True),
    ("::1", True),
    ("10.0.0.1", True),
    ("10.255.255.255", True),
    ("172.16.0.1", True),
    ("172.31.255.254", True),
    ("192.168.0.1", True),
    ("192.168.255.254", True),
    ("fc00::1", True),
    ("fd12:3456::1", True),
    ("::ffff:10.1.2.3", True),
    ("::ffff:172.18.0.5", True),
    # cloud metadata, even inside allowed ranges or in mapped form
    ("169.254.169.254", False),
    ("169.254.170.2", False),
    ("169.254.169.123", False),
    ("fd00:ec2::254", False),
    ("fd00:ec2::23", False),
    ("fd20:ce::254", False),
    ("100.100.100.200", False),
    ("168.63.129.16", False),
    ("192.0.0.192", False),
    ("::ffff:169.254.169.254", False),
    ("::ffff:100.100.100.200", False),
    # all link-local
    ("169.254.0.1", False),
    ("169.254.255.254", False),
    ("fe80::1", False),
    ("fe80::1%eth0", False),
    ("febf::1", False),
    # CGNAT (shared with other tenants of the carrier)
    ("100.64.0.1", False),
    ("100.127.255.254", False),
    # ranges ipaddress.is_private counts as private that are not the runner's network
    ("192.0.2.1", False),
    ("198.18.0.1", False),
    ("198.51.100.7", False),
    ("203.0.113.9", False),
    ("240.0.0.1", False),
    ("255.255.255.255", False),
    ("192.0.0.8", False),
    ("2001:db8::1", False),
    ("2001:2::1", False),
    ("2001::1", False),
    ("64:ff9b:1::1", False),
    ("100::1", False),
    ("::ffff:0:0", False),
    ("2002:a00:1::1", False),
    # public, unspecified, multicast, next to the allowed ranges, and nonsense
    ("8.8.8.8", False),
    ("172.15.255.255", False),
    ("172.32.0.0", False),
    ("11.0.0.0", False),
    ("0.0.0.0", False),
    ("::", False),
    ("224.0.0.1", False),
    ("ff02::1", False),
    ("2606:4700::1111", False),
    ("::ffff:8.8.8.8", False),
    ("::127.0.0.1", False),
    ("not-an-address", False),
]


@pytest.mark.parametrize(("address", "allowed"), ADDRESS_POLICY)
def test_allow_host_address_policy_is_an_explicit_allow_list(address: str, allowed: bool) -> None:
    assert is_isolated_address(address) is allowed


def _in_ipv4_allow_list(value: int) -> bool:
    # An oracle independent of ipaddress: the integer bounds of 127/8, 10/8, 172.16/12, 192.168/16.
    return (value >> 24) in {127, 10} or (value >> 20) == (172 << 4 | 1) or (value >> 16) == (192 << 8 | 168)


@given(st.integers(min_value=0, max_value=2**32 - 1))
@example(0xA9FEA9FE)  # 169.254.169.254
@example(0x64646464)  # 100.100.100.100 (CGNAT)
def test_every_ipv4_address_and_its_mapped_form_get_the_same_verdict(value: int) -> None:
    address = str(ipaddress.IPv4Address(value))
    assert is_isolated_address(address) is _in_ipv4_allow_list(value)
    assert is_isolated_address(f"::ffff:{address}") is is_isolated_address(address)


@given(st.integers(min_value=0, max_value=2**128 - 1))
@example(int(ipaddress.IPv6Address("fd00:ec2::254")))
@example(int(ipaddress.IPv6Address("fe80::1")))
def test_an_allowed_ipv6_address_is_loopback_or_unique_local_and_never_metadata(value: int) -> None:
    ip = ipaddress.IPv6Address(value)
    if ip.ipv4_mapped is not None:
        return
    expected = ip == ipaddress.IPv6Address("::1") or (
        value >> 121 == 0xFC >> 1
        and value >> 96 != int(ipaddress.IPv6Address("fd00:ec2::")) >> 96
        and ip != ipaddress.IPv6Address("fd20:ce::254")
    )
    assert is_isolated_address(str(ip)) is expected


def test_an_allowed_host_resolving_to_cloud_metadata_is_refused() -> None:
    for address in ("169.254.169.254", "fd00:ec2::254", "::ffff:169.254.169.254", "fe80::1"):
        endpoint = choose("http://agent:8080/v1", allow_hosts=["agent"])

        def resolve(host: str, port: int, answer: str = address) -> list[str]:
            return [answer]

        with pytest.raises(RunError, match="outside the allowed private ranges"):
            pin_allowed_host(endpoint, resolve)


def test_allow_host_is_exact_and_http_only() -> None:
    with pytest.raises(RunError):
        choose("http://agent.evil.com/v1", allow_hosts=["agent"])
    with pytest.raises(RunError):
        choose("https://agent/v1", allow_hosts=["agent"])


def test_allow_host_reaches_a_service_by_name_through_the_checked_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sys

    sys.path.insert(0, str(EXAMPLE))
    import agent  # type: ignore[import-not-found]

    server, _url = agent.serve(0)
    port = server.server_address[1]
    try:
        contract = (
            (EXAMPLE / "contract.yml")
            .read_text()
            .replace("http://127.0.0.1:8765/v1/chat/completions", f"http://agent-under-test:{port}/v1/chat/completions")
        )
        (tmp_path / "contract.yml").write_text(contract)
        monkeypatch.chdir(tmp_path)
        import behavegate.evidence.trust as trust
        from behavegate.cli import main

        lookups: list[str] = []

        def resolver(host: str, port: int) -> list[str]:
            lookups.append(host)
            return ["127.0.0.1"]

        monkeypatch.setattr(trust, "system_resolver", resolver)
        code = main(["test", "contract.yml", "--allow-host", "agent-under-test", "--format", "json", "--no-artifacts"])
        report = json.loads(capsys.readouterr().out)
        assert code == 0, report
        assert lookups == ["agent-under-test"]
        assert report["provenance"]["endpoint_source"] == "contract_endpoint"
    finally:
        server.shutdown()
        sys.path.remove(str(EXAMPLE))
        shutil.rmtree(tmp_path / ".behavegate", ignore_errors=True)
