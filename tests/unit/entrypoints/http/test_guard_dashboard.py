"""The guard's own-origin rule and its public files: what the dashboard at ``/`` needs."""

from __future__ import annotations

import pytest

from local_mcp_memory.entrypoints.http.guard import Policy, check, cors_headers, header_map

PORT = 8765


def policy(bind: str = "127.0.0.1", token: str | None = None, origins: tuple[str, ...] = ()) -> Policy:
    return Policy.for_bind(bind, PORT, origins, token)


def post_from(origin: str, host: str = f"127.0.0.1:{PORT}") -> dict[str, str]:
    return {"host": host, "origin": origin}


@pytest.mark.parametrize("origin", [f"http://127.0.0.1:{PORT}", f"http://localhost:{PORT}", f"http://LOCALHOST:{PORT}/", f"http://[::1]:{PORT}"])
def test_the_servers_own_origin_is_accepted_without_configuration(origin: str) -> None:
    assert check(policy(), "POST", header_map(post_from(origin))) is None


@pytest.mark.parametrize(
    "origin",
    [
        f"http://127.0.0.1:{PORT + 1}",  # another local service
        f"https://127.0.0.1:{PORT}",  # another scheme is another origin
        "http://127.0.0.1",
        f"http://evil.example:{PORT}",
        "null",
    ],
)
def test_other_origins_are_still_refused(origin: str) -> None:
    refusal = check(policy(), "POST", header_map(post_from(origin)))
    assert refusal is not None and refusal.reason == "origin_not_allowed"


def test_a_specific_bind_address_is_an_own_origin_too() -> None:
    lan = policy(bind="192.168.1.20", token="x" * 16)
    headers = post_from(f"http://192.168.1.20:{PORT}", host=f"192.168.1.20:{PORT}")
    assert check(lan, "POST", header_map({**headers, "authorization": "Bearer " + "x" * 16})) is None


def test_on_a_wildcard_bind_the_own_origin_is_the_one_the_host_header_names() -> None:
    wildcard = policy(bind="0.0.0.0", token="t" * 16)
    bearer = {"authorization": "Bearer " + "t" * 16}
    same = header_map({**post_from(f"http://10.0.0.5:{PORT}", host=f"10.0.0.5:{PORT}"), **bearer})
    other = header_map({**post_from(f"http://10.0.0.6:{PORT}", host=f"10.0.0.5:{PORT}"), **bearer})
    assert check(wildcard, "POST", same) is None
    assert check(wildcard, "POST", other).reason == "origin_not_allowed"  # type: ignore[union-attr]


def test_the_own_origin_still_needs_the_token() -> None:
    refusal = check(policy(token="secret"), "POST", header_map(post_from(f"http://127.0.0.1:{PORT}")))
    assert refusal is not None and refusal.status == 401


def test_the_own_origin_gets_no_cors_headers() -> None:
    assert cors_headers(policy(), header_map(post_from(f"http://127.0.0.1:{PORT}"))) == []


def test_public_files_need_no_token_but_pass_the_host_and_origin_checks() -> None:
    guarded = policy(token="secret")
    assert check(guarded, "GET", header_map({"host": f"127.0.0.1:{PORT}"}), public=True) is None
    assert check(guarded, "GET", header_map({"host": f"evil.example:{PORT}"}), public=True).reason == "host_not_allowed"  # type: ignore[union-attr]
    foreign = header_map({"host": f"127.0.0.1:{PORT}", "origin": "https://evil.example"})
    assert check(guarded, "GET", foreign, public=True).reason == "origin_not_allowed"  # type: ignore[union-attr]
