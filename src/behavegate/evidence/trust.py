"""Which endpoints a run may call, and with which credentials.

behavegate calls only what the person running it allowed: a loopback endpoint
named in the contract needs ``--allow-contract-endpoint``; a CI service host
needs ``--allow-host NAME`` and must resolve to private addresses only (the
connection then goes to the address that was checked); anything else needs
``--endpoint``, ``--allow-remote`` and HTTPS. All checks happen before any I/O.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import SplitResult, urlsplit

from behavegate.errors import RunError

MAX_TOKEN_CHARS = 8_192
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

Resolver = Callable[[str, int], list[str]]


@dataclass(frozen=True, slots=True)
class Credentials:
    """A bearer token; never printed, persisted only as a redaction marker."""

    token: str = field(repr=False)

    def header(self) -> str:
        return f"Bearer {self.token}"


@dataclass(frozen=True, slots=True)
class Endpoint:
    url: str  # what the user wrote, validated
    source: str  # "cli_override" | "contract_endpoint"
    fingerprint: str
    consent: bool  # the contract endpoint was allowed with --allow-contract-endpoint
    host: str
    connect_url: str = ""  # the URL actually dialled (pinned address for allow-listed hosts)
    host_header: str | None = None  # the Host header to send when the address is pinned


def load_credentials(auth_env: str | None, environ: Mapping[str, str]) -> Credentials | None:
    if auth_env is None:
        return None
    if not _ENV_NAME.fullmatch(auth_env):
        raise RunError("--auth-env must be a valid environment variable name")
    token = environ.get(auth_env)
    if not token:
        raise RunError(f"environment variable {auth_env} is not set")
    if len(token) > MAX_TOKEN_CHARS:
        raise RunError(f"environment variable {auth_env} exceeds {MAX_TOKEN_CHARS} characters")
    if "\r" in token or "\n" in token:
        raise RunError(f"environment variable {auth_env} contains invalid header characters")
    return Credentials(token)


def is_loopback_host(hostname: str) -> bool:
    """Literal loopback only: ``localhost`` or a loopback IP literal (``127.1`` is not)."""
    if hostname.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(hostname).is_loopback
    except ValueError:
        return False


def is_isolated_address(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return bool(ip.is_loopback or ip.is_private or ip.is_link_local) and not ip.is_unspecified


def fingerprint(url: str) -> str:
    parts = urlsplit(url)
    hostname = parts.hostname or ""
    host = f"[{hostname.lower()}]" if ":" in hostname else hostname.lower()
    port = parts.port
    default = 80 if parts.scheme.lower() == "http" else 443
    netloc = host if port in {None, default} else f"{host}:{port}"
    canonical = f"{parts.scheme.lower()}://{netloc}{parts.path or '/'}"
    if parts.query:
        canonical = f"{canonical}?{parts.query}"
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _split(url: str) -> SplitResult:
    if not url.strip():
        raise RunError("agent endpoint must be a non-empty URL")
    if url != url.strip():
        raise RunError("agent endpoint must not contain surrounding whitespace")
    if not url.isascii() or not url.isprintable() or " " in url:
        # httpx would refuse these only when the request is built, mid-run.
        raise RunError("agent endpoint must be printable ASCII without spaces (percent-encode anything else)")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise RunError(f"Invalid agent endpoint: {exc}") from None
    if parts.scheme not in {"http", "https"}:
        raise RunError("agent endpoint must use http or https")
    if not parts.hostname:
        raise RunError("agent endpoint must include a hostname")
    if parts.username is not None or parts.password is not None:
        raise RunError("agent endpoint must not contain credentials")
    if parts.fragment:
        raise RunError("agent endpoint must not contain a fragment")
    try:
        port = parts.port
    except ValueError:
        raise RunError("agent endpoint contains an invalid port") from None
    if port is not None and not 1 <= port <= 65_535:
        raise RunError("agent endpoint contains an invalid port")
    return parts


def choose_endpoint(
    contract_endpoint: str | None,
    model: str | None,
    *,
    override: str | None,
    allow_remote: bool,
    allow_contract_endpoint: bool,
    authenticated: bool,
    allow_hosts: Iterable[str] = (),
) -> Endpoint:
    """Validate the endpoint a live run will call (skylos's order and words)."""
    url = override if override is not None else contract_endpoint
    if url is None:
        raise RunError("agent.endpoint is required for live tests; use --observations for offline mode")
    if model is None:
        raise RunError("agent.model is required for live tests; use --observations for offline mode")
    is_override = override is not None
    parts = _split(url)
    host = (parts.hostname or "").lower()
    loopback = is_loopback_host(parts.hostname or "")
    listed = parts.scheme == "http" and host in {h.strip().lower() for h in allow_hosts} and not loopback
    if listed:
        if authenticated and not is_override:
            raise RunError("authenticated agent endpoints require a trusted --endpoint override")
    else:
        if not loopback and not is_override:
            raise RunError("remote agent endpoints must be supplied with trusted --endpoint, not contract YAML")
        if loopback and not is_override and not allow_contract_endpoint:
            raise RunError("contract-provided agent endpoints require --allow-contract-endpoint or a trusted --endpoint override")
        if not loopback and not allow_remote:
            raise RunError("remote agent endpoints require --allow-remote; loopback endpoints are allowed by default")
        if not loopback and parts.scheme != "https":
            raise RunError("remote agent endpoints must use https")
        if authenticated and not is_override:
            raise RunError("authenticated agent endpoints require a trusted --endpoint override")
    return Endpoint(
        url=url,
        source="cli_override" if is_override else "contract_endpoint",
        fingerprint=fingerprint(url),
        consent=not is_override and allow_contract_endpoint,
        host=host if listed else "",
        connect_url=url,
    )


def pin_allowed_host(endpoint: Endpoint, resolve: Resolver) -> Endpoint:
    """For an allow-listed service host: resolve once, refuse any public address,
    and dial the checked address (so a second lookup cannot rebind it)."""
    if not endpoint.host:
        return endpoint
    parts = urlsplit(endpoint.url)
    port = parts.port or 80
    try:
        addresses = resolve(endpoint.host, port)
    except OSError as exc:
        raise RunError(f"allowed host {endpoint.host!r} could not be resolved: {exc}") from None
    if not addresses:
        raise RunError(f"allowed host {endpoint.host!r} did not resolve")
    public = sorted({a for a in addresses if not is_isolated_address(a)})
    if public:
        raise RunError(f"allowed host {endpoint.host!r} resolves to non-private addresses: {public}")
    address = addresses[0]
    literal = f"[{address}]" if ":" in address else address
    netloc = f"{literal}:{parts.port}" if parts.port else literal
    connect = parts._replace(netloc=netloc).geturl()
    host_header = parts.netloc.rsplit("@", 1)[-1]
    return Endpoint(
        url=endpoint.url,
        source=endpoint.source,
        fingerprint=endpoint.fingerprint,
        consent=endpoint.consent,
        host=endpoint.host,
        connect_url=connect,
        host_header=host_header,
    )


def system_resolver(host: str, port: int) -> list[str]:
    import socket

    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]
