"""The one guard every HTTP request passes before a route sees it.

A browser tab on any website can send requests to 127.0.0.1, so "local" is not "safe".
``check`` answers, in this order, the first problem it finds:

    1. Host     the Host header must name the bound address: localhost, 127.0.0.1 or
                [::1] with the bound port (a specific non-loopback bind adds its own
                address; a wildcard bind accepts any Host, and requires a token)
                -> 403 ``host_not_allowed``     (DNS rebinding)
    2. Origin   absent, listed in ``http.allowedOrigins``, or the server's own origin
                -> 403 ``origin_not_allowed``   (cross-site requests from browser tabs)
    3. OPTIONS  with an (allowed) Origin: a CORS preflight, answered here with 204
    4. Token    when one is set, ``Authorization: Bearer <token>`` on every other request
                except the dashboard's static files (``public``), which hold no data
                -> 401 ``token_missing`` / ``token_invalid`` with ``WWW-Authenticate``
                (other users and hosts on the LAN)

The server's own origin is ``http://`` followed by an accepted Host value
(``http://127.0.0.1:8765``, ``http://localhost:8765``, the bound address with its port):
the dashboard served at ``/`` calls ``/rpc`` from there, and browsers send Origin on those
POSTs. Only this server's pages have that origin, since the Host check already refused
every other name. On a wildcard bind, which accepts any Host, the own origin is
``http://`` followed by the request's own Host header.

CORS is off unless origins are configured: without them no response carries a CORS
header and every request with a foreign Origin is refused. Header values are compared
exactly (Host and Origin case-insensitively); a security header sent twice is refused.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Iterable, Mapping, Sequence

import attrs

Headers = list[tuple[bytes, bytes]]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})
CORS_ALLOWED_HEADERS = b"content-type, authorization, mcp-session-id, mcp-protocol-version"
CORS_EXPOSED_HEADERS = b"mcp-session-id"
CORS_MAX_AGE = b"600"


@attrs.frozen
class Refusal:
    """An answer given instead of the route's: HTTP status, a stable reason code for
    programs, a sentence for people, and extra headers."""

    status: int
    reason: str
    message: str
    headers: tuple[tuple[bytes, bytes], ...] = ()


@attrs.frozen
class Policy:
    """What the guard lets through. ``hosts`` None: any Host (wildcard bind)."""

    hosts: frozenset[str] | None
    allowed_origins: frozenset[str]
    token: bytes | None = attrs.field(repr=False)

    @classmethod
    def for_bind(cls, host: str, port: int, allowed_origins: Iterable[str], token: str | None) -> Policy:
        return cls(
            hosts=allowed_hosts(host, port),
            allowed_origins=frozenset(normalize_origin(o) for o in allowed_origins),
            token=token.encode() if token else None,
        )


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, port: int) -> frozenset[str] | None:
    """The Host header values accepted for a server bound to ``host:port``."""
    if host in WILDCARD_BINDS:
        return None
    names = set(LOOPBACK_NAMES)
    bare = host.strip("[]").lower()
    try:
        names.add(f"[{bare}]" if ipaddress.ip_address(bare).version == 6 else bare)
    except ValueError:
        names.add(bare)
    with_port = {f"{name}:{port}" for name in names}
    return frozenset(with_port | names) if port == 80 else frozenset(with_port)


def normalize_origin(origin: str) -> str:
    return origin.strip().rstrip("/").lower()


class RequestHeaders:
    """A request's headers by lower-case name; values decoded as latin-1."""

    def __init__(self, raw: Sequence[tuple[bytes, bytes]]) -> None:
        self._values: dict[str, list[str]] = {}
        for name, value in raw:
            self._values.setdefault(name.decode("latin-1").lower(), []).append(value.decode("latin-1"))

    def get(self, name: str) -> str | None:
        """The header's value; None when absent. Several values are joined with ", "."""
        values = self._values.get(name)
        return None if values is None else ", ".join(values)

    def count(self, name: str) -> int:
        return len(self._values.get(name, ()))


def check(policy: Policy, method: str, headers: RequestHeaders, *, public: bool = False) -> Refusal | None:
    """The refusal for this request, or None to let it through (see the module docstring).
    A CORS preflight comes back as a 204 "refusal": it is answered here, not routed.
    ``public`` requests (the dashboard's static files) pass Host and Origin but no token."""
    refusal = _check_host(policy, headers) or _check_origin(policy, headers)
    if refusal:
        return refusal
    if method == "OPTIONS" and headers.get("origin") is not None:
        return Refusal(204, "preflight", "", preflight_headers(headers.get("origin") or ""))
    if method == "OPTIONS" or public:
        return None
    return _check_token(policy, headers)


def is_own_origin(policy: Policy, origin: str, host: str | None) -> bool:
    """True when ``origin`` is this server's own (see the module docstring)."""
    if not normalize_origin(origin).startswith("http://"):
        return False
    name = normalize_origin(origin).removeprefix("http://")
    if policy.hosts is None:
        return host is not None and name == host.strip().lower()
    return name in policy.hosts


def cors_headers(policy: Policy, headers: RequestHeaders) -> Headers:
    """Headers a response to an allowed cross-origin request carries; none otherwise."""
    origin = headers.get("origin")
    if origin is None or normalize_origin(origin) not in policy.allowed_origins:
        return []
    return [
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-expose-headers", CORS_EXPOSED_HEADERS),
        (b"vary", b"Origin"),
    ]


def preflight_headers(origin: str) -> tuple[tuple[bytes, bytes], ...]:
    return (
        (b"access-control-allow-origin", origin.encode("latin-1")),
        (b"access-control-allow-methods", b"POST, DELETE"),
        (b"access-control-allow-headers", CORS_ALLOWED_HEADERS),
        (b"access-control-max-age", CORS_MAX_AGE),
        (b"vary", b"Origin"),
    )


def _check_host(policy: Policy, headers: RequestHeaders) -> Refusal | None:
    if policy.hosts is None:
        return None
    host = headers.get("host")
    if headers.count("host") == 1 and host is not None and host.lower() in policy.hosts:
        return None
    return Refusal(
        403,
        "host_not_allowed",
        "Forbidden: the Host header must name this server's loopback address and port "
        "(localhost, 127.0.0.1 or [::1]); requests through other names are refused to "
        "prevent DNS rebinding",
    )


def _check_origin(policy: Policy, headers: RequestHeaders) -> Refusal | None:
    origin = headers.get("origin")
    if origin is None:
        return None
    if headers.count("origin") == 1 and (
        normalize_origin(origin) in policy.allowed_origins or is_own_origin(policy, origin, headers.get("host"))
    ):
        return None
    return Refusal(
        403,
        "origin_not_allowed",
        "Forbidden: requests from web pages are refused unless they come from this server's "
        "own dashboard or their origin is listed in http.allowedOrigins in the config file",
    )


def _check_token(policy: Policy, headers: RequestHeaders) -> Refusal | None:
    if policy.token is None:
        return None
    authorization = headers.get("authorization")
    if authorization is None:
        return Refusal(
            401,
            "token_missing",
            "Unauthorized: this server requires 'Authorization: Bearer <token>'",
            ((b"www-authenticate", b'Bearer realm="mcp-memory"'),),
        )
    scheme, _, presented = authorization.partition(" ")
    valid = (
        headers.count("authorization") == 1
        and scheme.lower() == "bearer"
        and hmac.compare_digest(presented.strip().encode("latin-1"), policy.token)
    )
    if valid:
        return None
    return Refusal(
        401,
        "token_invalid",
        "Unauthorized: the bearer token is not valid",
        ((b"www-authenticate", b'Bearer realm="mcp-memory", error="invalid_token"'),),
    )


def header_map(headers: Mapping[str, str]) -> RequestHeaders:
    """Request headers from a plain mapping (for callers outside ASGI, and tests)."""
    return RequestHeaders([(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()])
