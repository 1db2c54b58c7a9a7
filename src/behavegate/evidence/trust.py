"""Which endpoints a run may call, and with which credentials.

behavegate calls only what the person running it allowed: a loopback endpoint
named in the contract needs ``--allow-contract-endpoint``; a CI service host
needs ``--allow-host NAME`` and must resolve to loopback, RFC 1918 or unique
local addresses only, never link-local or cloud metadata (the
connection then goes to the address that was checked); anything else needs
``--endpoint``, ``--allow-remote`` and HTTPS. All checks happen before any I/O.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import SplitResult, urlsplit

from behavegate.errors import RunError
from behavegate.frozen import Frozen, not_shown
from behavegate.limits import MAX_TOKEN_CHARS

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

Resolver = Callable[[str, int], list[str]]


@not_shown("token")
class Credentials(Frozen):
    """A bearer token; never printed, persisted only as a redaction marker."""

    token: str

    def header(self) -> str:
        return f"Bearer {self.token}"


class Endpoint(Frozen):
    url: str  # what the user wrote, validated
    source: str  # "cli_override" | "contract_endpoint"
    fingerprint: str
    consent: bool  # the contract endpoint was allowed with --allow-contract-endpoint
    host: str
    connect_url: str = ""  # the URL actually dialled (pinned address for allow-listed hosts)
    host_header: str | None = None  # the Host header to send when the address is pinned


def load_credentials(auth_env: str | None, environ: Mapping[str, str], flag: str = "--auth-env") -> Credentials | None:
    if auth_env is None:
        return None
    if not _ENV_NAME.fullmatch(auth_env):
        raise RunError(f"{flag} must be a valid environment variable name")
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


# Where an --allow-host name may resolve, written out rather than taken from
# ``ipaddress.is_private`` (whose table changes between Python versions and has
# counted globally routed IPv6 ranges as private). Not listed, so refused:
# link-local (169.254.0.0/16, fe80::/10: cloud metadata lives there, and no
# service container is given such an address), CGNAT 100.64.0.0/10 (a carrier's
# space shared with other tenants rather than the runner's own network, and the
# home of Alibaba's metadata service), documentation, benchmarking, multicast,
# the unspecified address and every public range.
ALLOWED_NETWORKS: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = tuple(
    ipaddress.ip_network(n)
    for n in (
        "127.0.0.0/8",  # loopback
        "::1/128",  # loopback
        "10.0.0.0/8",  # RFC 1918
        "172.16.0.0/12",  # RFC 1918 (Docker's default bridges)
        "192.168.0.0/16",  # RFC 1918
        "fc00::/7",  # RFC 4193 unique local
    )
)
# Cloud metadata and platform services, refused even where they sit inside an
# allowed range (the IPv6 ones are unique local addresses).
METADATA_NETWORKS: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = tuple(
    ipaddress.ip_network(n)
    for n in (
        "169.254.169.254/32",  # AWS, GCP, Azure, OCI, DigitalOcean instance metadata
        "169.254.170.2/32",  # AWS ECS task metadata and credentials
        "169.254.169.123/32",  # AWS time sync
        "fd00:ec2::/32",  # AWS Nitro IPv6 services: metadata fd00:ec2::254, DNS, NTP
        "fd20:ce::254/128",  # GCP IPv6 metadata
        "100.100.100.200/32",  # Alibaba Cloud metadata
        "168.63.129.16/32",  # Azure wire server
        "192.0.0.192/32",  # Oracle Cloud legacy metadata
    )
)


def is_isolated_address(address: str) -> bool:
    """Is ``address`` one an allow-listed service host may resolve to?"""
    if "%" in address:
        # A zone id only matters for link-local addresses, which are never allowed, and
        # would be written unencoded into the pinned URL.
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:a.b.c.d reaches a.b.c.d: judge it as that
    if any(ip in network for network in METADATA_NETWORKS):
        return False
    return any(ip in network for network in ALLOWED_NETWORKS)


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


class Role(Frozen):
    """Whose endpoint is being checked, and the words and flags that name it: the agent's
    (skylos's words, exactly) or the judge's (the same rules under its own flags)."""

    name: str = "agent"
    key: str = "agent"  # the contract block
    override: str = "--endpoint"
    contract_consent: str = "--allow-contract-endpoint"
    remote_consent: str = "--allow-remote"
    needed_for: str = "live tests; use --observations for offline mode"


AGENT = Role()
JUDGE = Role(
    "judge",
    "judge",
    "--judge-endpoint",
    "--judge-allow-contract-endpoint",
    "--judge-allow-remote",
    "response.judge checks; give --judge-endpoint and --judge-model, or the contract's judge block",
)


def _split(url: str, role: Role = AGENT) -> SplitResult:
    who = f"{role.name} endpoint"
    if not url.strip():
        raise RunError(f"{who} must be a non-empty URL")
    if url != url.strip():
        raise RunError(f"{who} must not contain surrounding whitespace")
    if not url.isascii() or not url.isprintable() or " " in url:
        # the client would refuse these only when the request is built, mid-run.
        raise RunError(f"{who} must be printable ASCII without spaces (percent-encode anything else)")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise RunError(f"Invalid {who}: {exc}") from None
    if parts.scheme not in {"http", "https"}:
        raise RunError(f"{who} must use http or https")
    if not parts.hostname:
        raise RunError(f"{who} must include a hostname")
    if parts.username is not None or parts.password is not None:
        raise RunError(f"{who} must not contain credentials")
    if parts.fragment:
        raise RunError(f"{who} must not contain a fragment")
    try:
        port = parts.port
    except ValueError:
        raise RunError(f"{who} contains an invalid port") from None
    if port is not None and not 1 <= port <= 65_535:
        raise RunError(f"{who} contains an invalid port")
    _as_dialled(url, who)
    return parts


def _as_dialled(url: str, who: str) -> None:
    """The URL as the client reads it (evidence/http_model.py), which refuses what urlsplit
    lets pass (``http://[::1]evil.example/``: urlsplit drops the text after the bracket);
    refused here, as the run starts, not as an internal error in the middle of it."""
    from behavegate.evidence.http_model import InvalidURL, parse_url

    try:
        parse_url(url)
    except InvalidURL as exc:
        raise RunError(f"Invalid {who}: {exc}") from None


def choose_endpoint(
    contract_endpoint: str | None,
    model: str | None,
    *,
    override: str | None,
    allow_remote: bool,
    allow_contract_endpoint: bool,
    authenticated: bool,
    allow_hosts: Iterable[str] = (),
    role: Role = AGENT,
    needs_model: bool = True,
) -> Endpoint:
    """Validate the endpoint a live run will call (skylos's order and words; the judge's
    endpoint by the very same rules, under its own flags)."""
    who, flag = role.name, role.override
    url = override if override is not None else contract_endpoint
    if url is None:
        raise RunError(f"{role.key}.endpoint is required for {role.needed_for}")
    if model is None and needs_model:  # a custom agent (agent.http) is sent a model only where its template places it
        raise RunError(f"{role.key}.model is required for {role.needed_for}")
    is_override = override is not None
    parts = _split(url, role)
    host = (parts.hostname or "").lower()
    loopback = is_loopback_host(parts.hostname or "")
    listed = parts.scheme == "http" and host in {h.strip().lower() for h in allow_hosts} and not loopback
    if listed:
        if authenticated and not is_override:
            raise RunError(f"authenticated {who} endpoints require a trusted {flag} override")
    else:
        hint = _service_host_hint(parts, loopback)
        if not loopback and not is_override:
            raise _refused(f"remote {who} endpoints must be supplied with trusted {flag}, not contract YAML", hint)
        if loopback and not is_override and not allow_contract_endpoint:
            raise RunError(f"contract-provided {who} endpoints require {role.contract_consent} or a trusted {flag} override")
        if not loopback and not allow_remote:
            raise _refused(
                f"remote {who} endpoints require {role.remote_consent}; loopback endpoints are allowed by default", hint
            )
        if not loopback and parts.scheme != "https":
            raise _refused(f"remote {who} endpoints must use https", hint)
        if authenticated and not is_override:
            raise RunError(f"authenticated {who} endpoints require a trusted {flag} override")
    return Endpoint(
        url=url,
        source="cli_override" if is_override else "contract_endpoint",
        fingerprint=fingerprint(url),
        consent=not is_override and allow_contract_endpoint,
        host=host if listed else "",
        connect_url=url,
    )


def _service_host_hint(parts: SplitResult, loopback: bool) -> str:
    """Plain http to a host that is not loopback is, in CI, a service container: the flag that
    allows it is --allow-host NAME (--allow-remote would only go on to ask for https)."""
    if loopback or parts.scheme != "http":
        return ""
    return (
        f"; if {parts.hostname} is a CI service container reached over plain http, allow it by name: "
        f"--allow-host {parts.hostname} (--allow-remote is for HTTPS endpoints elsewhere)"
    )


def _refused(message: str, hint: str) -> RunError:
    """skylos's words stay the JSON ``error``; a person also reads the hint."""
    return RunError(message, human=message + hint) if hint else RunError(message)


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
        raise RunError(f"allowed host {endpoint.host!r} resolves to addresses outside the allowed private ranges: {public}")
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
