"""The HTTP guard's rules, as pure functions of the bind, the settings and the headers."""

from __future__ import annotations

import pytest

from local_mcp_memory.entrypoints.http.guard import Policy, allowed_hosts, check, cors_headers, header_map, is_loopback

PORT = 8765
HOST = {"host": f"127.0.0.1:{PORT}"}


def policy(origins: tuple[str, ...] = (), token: str | None = None, bind: str = "127.0.0.1") -> Policy:
    return Policy.for_bind(bind, PORT, origins, token)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LocalHost"])
def test_loopback_binds(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com", "localhost.example.com"])
def test_non_loopback_binds(host: str) -> None:
    assert not is_loopback(host)


def test_a_loopback_bind_accepts_the_three_loopback_names_with_its_port() -> None:
    assert allowed_hosts("127.0.0.1", PORT) == {f"localhost:{PORT}", f"127.0.0.1:{PORT}", f"[::1]:{PORT}"}


def test_a_specific_address_bind_also_accepts_that_address() -> None:
    assert f"192.168.1.10:{PORT}" in allowed_hosts("192.168.1.10", PORT)
    assert f"[fe80::1]:{PORT}" in allowed_hosts("fe80::1", PORT)


def test_a_wildcard_bind_accepts_any_host() -> None:
    assert allowed_hosts("0.0.0.0", PORT) is None
    assert check(policy(bind="0.0.0.0", token="t"), "POST", header_map({"host": "anything", "authorization": "Bearer t"})) is None


def test_a_missing_host_header_is_refused() -> None:
    refusal = check(policy(), "POST", header_map({}))
    assert refusal is not None and refusal.reason == "host_not_allowed"


def test_host_is_checked_before_origin_and_token() -> None:
    headers = header_map({"host": "evil:1", "origin": "https://evil.example"})
    refusal = check(policy(token="t"), "POST", headers)
    assert refusal is not None and refusal.reason == "host_not_allowed"


def test_an_origin_matches_without_case_or_a_trailing_slash() -> None:
    allowed = policy(origins=("http://LOCALHOST:5173/",))
    assert check(allowed, "POST", header_map({**HOST, "origin": "http://localhost:5173"})) is None


def test_the_null_origin_is_refused_unless_listed() -> None:
    refusal = check(policy(), "POST", header_map({**HOST, "origin": "null"}))
    assert refusal is not None and refusal.status == 403


def test_a_preflight_needs_no_token() -> None:
    allowed = policy(origins=("http://localhost:5173",), token="t")
    refusal = check(allowed, "OPTIONS", header_map({**HOST, "origin": "http://localhost:5173"}))
    assert refusal is not None and refusal.status == 204
    assert (b"access-control-allow-origin", b"http://localhost:5173") in refusal.headers


def test_the_token_scheme_is_case_insensitive_and_the_token_is_not() -> None:
    guarded = policy(token="Secret")
    assert check(guarded, "POST", header_map({**HOST, "authorization": "bearer Secret"})) is None
    refusal = check(guarded, "POST", header_map({**HOST, "authorization": "Bearer secret"}))
    assert refusal is not None and refusal.reason == "token_invalid"


def test_the_policy_repr_hides_the_token() -> None:
    assert "Secret" not in repr(policy(token="Secret"))


def test_cors_headers_only_for_allowed_origins() -> None:
    allowed = policy(origins=("http://localhost:5173",))
    assert cors_headers(allowed, header_map({"origin": "http://other:1"})) == []
    assert cors_headers(policy(), header_map({})) == []
    assert (b"vary", b"Origin") in cors_headers(allowed, header_map({"origin": "http://localhost:5173"}))

