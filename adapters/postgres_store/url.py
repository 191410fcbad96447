"""The store URL: ``postgresql://user:password@host:port/database`` (``postgres://`` too,
the scheme in any case).

``StoreUrl.parse`` reads the URL the way libpq does, so that what the messages show is
where libpq connects: the host and port come from the URL's authority or, overriding it,
from its query parameters (``postgresql:///db?host=/tmp&port=5433``), else from
``PGHOST``/``PGPORT``, else the local Unix socket and 5432; several hosts
(``h1:5432,h2:5433``) are kept in order; ``user``, ``password`` and ``dbname`` may be query
parameters too. libpq itself only knows the lower-case schemes, so ``conninfo`` (what it
is handed) starts ``postgresql://`` whatever the case the user wrote.

What messages may show: ``place`` (``database db on host:5432``) and ``shown``, the URL
with its password masked (``postgresql://user:***@host:5432/db``). No message, log line
or reply carries the password.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from urllib.parse import unquote

import attrs

SCHEMES = ("postgresql", "postgres")
DEFAULT_PORT = 5432
LOCAL_SOCKET = "the local socket"
"""What ``place`` names when no host is given: libpq then uses its Unix socket directory."""

_SCHEME = re.compile(r"(postgres(?:ql)?)://", re.IGNORECASE)
_HOST_PORT = re.compile(r"(?P<host>\[[^\]]*\]|[^:]*)(?::(?P<port>[^:]*))?")
_BAD_PORT = "the store URL's port must be a number in 1..65535"


def is_postgres_url(text: str) -> bool:
    """Whether a store setting names a PostgreSQL database rather than a local path."""
    return _SCHEME.match(text) is not None


@attrs.frozen
class StoreUrl:
    conninfo: str = attrs.field(repr=False)
    hosts: tuple[tuple[str | None, int], ...]
    database: str
    user: str | None
    password: str | None = attrs.field(repr=False)

    @classmethod
    def parse(cls, text: str, environ: Mapping[str, str] | None = None) -> StoreUrl:
        """``ValueError`` (never naming the password) for a URL that is not a PostgreSQL
        one or whose port is not a number. ``environ`` (default ``os.environ``) gives
        libpq's defaults for what the URL leaves out."""
        scheme = _SCHEME.match(text)
        if scheme is None:
            raise ValueError("a store URL must start with postgresql://")
        env = os.environ if environ is None else environ
        rest = text[scheme.end() :].split("#", 1)[0]
        rest, _, query = rest.partition("?")
        authority, _, path = rest.partition("/")
        userinfo, _, hostlist = authority.rpartition("@")
        user, colon, password = userinfo.partition(":")
        host, port = _authority_hosts(hostlist)
        fields = {
            "user": unquote(user) or None,
            "password": unquote(password) if colon else None,
            "dbname": unquote(path) or None,
            "host": host,
            "port": port,
        }
        for pair in filter(None, query.split("&")):  # libpq: a query parameter wins
            key, _, value = pair.partition("=")
            if key in fields:
                fields[key] = unquote(value)
        hosts = _hosts(fields["host"], fields["port"], env)
        user_name = fields["user"] or env.get("PGUSER") or None
        database = fields["dbname"] or env.get("PGDATABASE") or user_name or "postgres"
        return cls(
            conninfo="postgresql://" + text[scheme.end() :],
            hosts=hosts,
            database=database,
            user=user_name,
            password=fields["password"],
        )

    @property
    def host(self) -> str:
        """The first host (a name, an address or a socket directory), or ``LOCAL_SOCKET``."""
        return self.hosts[0][0] or LOCAL_SOCKET

    @property
    def port(self) -> int:
        return self.hosts[0][1]

    @property
    def shown(self) -> str:
        """The URL as replies and logs show it: the password replaced by ``***``; hosts in
        the query when one is a socket directory, as libpq reads them."""
        user = self.user or ""
        userinfo = f"{user}:***@" if self.password is not None else (f"{user}@" if user else "")
        if all(host and not host.startswith("/") for host, _ in self.hosts):
            authority = ",".join(f"[{h}]" if ":" in h else h for h, _ in self.hosts)  # type: ignore[operator]
            ports = ",".join(str(port) for _, port in self.hosts)
            if len(self.hosts) == 1:
                return f"postgresql://{userinfo}{authority}:{ports}/{self.database}"
            return f"postgresql://{userinfo}/{self.database}?host={authority}&port={ports}"
        hosts = ",".join(host or "" for host, _ in self.hosts)
        query = ("host=" + hosts + "&" if hosts.strip(",") else "") + "port=" + ",".join(str(p) for _, p in self.hosts)
        return f"postgresql://{userinfo}/{self.database}?{query}"

    @property
    def place(self) -> str:
        """Where the database is, for error messages: ``database db on host:5432``
        (``on /tmp:5433`` for a socket directory, ``on the local socket (port 5432)``
        without a host, hosts joined by commas)."""
        where = ",".join(_endpoint(host, port) for host, port in self.hosts)
        return f"database {self.database} on {where}"


def _endpoint(host: str | None, port: int) -> str:
    if host is None:
        return f"{LOCAL_SOCKET} (port {port})"
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _authority_hosts(hostlist: str) -> tuple[str | None, str | None]:
    """The URL authority's hosts (``h1:5432,[::1]:5433``) as libpq's ``host`` and ``port``
    lists; ``port`` None when no host names one."""
    if not hostlist:
        return None, None
    hosts, ports = [], []
    for entry in hostlist.split(","):
        match = _HOST_PORT.fullmatch(entry)
        if match is None:
            raise ValueError(_BAD_PORT)
        hosts.append(unquote(match.group("host")).strip("[]"))
        ports.append(match.group("port") or "")
    return ",".join(hosts), (",".join(ports) if any(ports) else None)


def _hosts(host: str | None, port: str | None, env: Mapping[str, str]) -> tuple[tuple[str | None, int], ...]:
    """libpq's pairing of the ``host`` and ``port`` lists, each from the URL or else the
    environment: one port for every host, or one per host; an empty entry is the default."""
    hosts = (host or env.get("PGHOST") or "").split(",")
    ports = (port if port is not None else env.get("PGPORT", "")).split(",")
    if len(ports) not in (1, len(hosts)):
        raise ValueError("the store URL must give one port, or one per host")
    if len(ports) == 1:
        ports = ports * len(hosts)
    return tuple((h or None, _port(p)) for h, p in zip(hosts, ports))


def _port(text: str | None) -> int:
    if not text:
        return DEFAULT_PORT
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise ValueError(_BAD_PORT)
    return int(text)
