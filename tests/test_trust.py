"""Which endpoints a run may call: skylos's rules plus --allow-host."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import EXAMPLE

from behavegate.errors import RunError
from behavegate.evidence.trust import choose_endpoint, fingerprint, is_loopback_host, load_credentials, pin_allowed_host


def choose(url: str | None, *, override: str | None = None, **flags: object) -> object:
    defaults: dict[str, object] = {"allow_remote": False, "allow_contract_endpoint": False, "authenticated": False}
    defaults.update(flags)
    return choose_endpoint(url, "m", override=override, **defaults)  # type: ignore[arg-type]


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
        ("http://127.0.0.1/v1", {"allow_contract_endpoint": True, "authenticated": True}, "require a trusted --endpoint override"),
    ],
)
def test_contract_endpoints_need_consent_and_stay_local(url: str, flags: dict[str, object], message: str) -> None:
    with pytest.raises(RunError, match=message):
        choose(url, **flags)


def test_remote_overrides_need_allow_remote_and_https() -> None:
    with pytest.raises(RunError, match="require --allow-remote"):
        choose(None, override="https://agent.example.com/v1")
    with pytest.raises(RunError, match="must use https"):
        choose(None, override="http://agent.example.com/v1", allow_remote=True)
    endpoint = choose(None, override="https://agent.example.com/v1", allow_remote=True)
    assert endpoint.source == "cli_override"  # type: ignore[attr-defined]


def test_fingerprint_canonicalizes_scheme_host_and_default_port() -> None:
    assert fingerprint("HTTP://LOCALHOST:80/v1") == fingerprint("http://localhost/v1")
    assert fingerprint("http://[::1]:8000") == fingerprint("http://[::1]:8000/")


def test_credentials_come_from_a_named_variable_only() -> None:
    assert load_credentials("TOKEN", {"TOKEN": "abc"}).header() == "Bearer abc"  # type: ignore[union-attr]
    for name, env, message in [("1X", {}, "valid environment variable name"), ("T", {}, "is not set"),
                               ("T", {"T": "a\nb"}, "invalid header characters"), ("T", {"T": "x" * 8193}, "exceeds 8192")]:  # fmt: skip
        with pytest.raises(RunError, match=message):
            load_credentials(name, env)
    assert "abc" not in repr(load_credentials("TOKEN", {"TOKEN": "abc"}))


def test_allowed_host_is_pinned_to_the_private_address_it_resolved_to() -> None:
    endpoint = choose("http://agent:8080/v1/chat/completions", allow_hosts=["agent"])
    pinned = pin_allowed_host(endpoint, lambda host, port: ["172.18.0.5"])  # type: ignore[arg-type]
    assert pinned.connect_url == "http://172.18.0.5:8080/v1/chat/completions"
    assert pinned.host_header == "agent:8080"
    assert pinned.url == "http://agent:8080/v1/chat/completions"


@pytest.mark.parametrize("addresses", [["8.8.8.8"], ["10.0.0.2", "93.184.216.34"], ["0.0.0.0"]])
def test_allowed_host_resolving_to_a_public_address_is_refused(addresses: list[str]) -> None:
    endpoint = choose("http://agent:8080/v1", allow_hosts=["agent"])
    with pytest.raises(RunError, match="non-private"):
        pin_allowed_host(endpoint, lambda host, port: addresses)  # type: ignore[arg-type]


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
        contract = (EXAMPLE / "contract.yml").read_text().replace(
            "http://127.0.0.1:8765/v1/chat/completions", f"http://agent-under-test:{port}/v1/chat/completions"
        )
        (tmp_path / "contract.yml").write_text(contract)
        monkeypatch.chdir(tmp_path)
        import behavegate.evidence.trust as trust
        from behavegate.cli import main

        lookups: list[str] = []
        monkeypatch.setattr(trust, "system_resolver", lambda host, p: lookups.append(host) or ["127.0.0.1"])
        code = main(["test", "contract.yml", "--allow-host", "agent-under-test", "--format", "json", "--no-artifacts"])
        report = json.loads(capsys.readouterr().out)
        assert code == 0, report
        assert lookups == ["agent-under-test"]
        assert report["provenance"]["endpoint_source"] == "contract_endpoint"
    finally:
        server.shutdown()
        sys.path.remove(str(EXAMPLE))
        shutil.rmtree(tmp_path / ".behavegate", ignore_errors=True)
