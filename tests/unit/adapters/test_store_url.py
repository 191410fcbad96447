"""``StoreUrl`` reads a PostgreSQL URL as libpq does, and shows it without the password."""

from __future__ import annotations

import pytest

from local_mcp_memory.adapters.postgres_store.url import StoreUrl, is_postgres_url

SECRET = "s3cret pw"


@pytest.mark.parametrize(
    ("url", "place", "shown"),
    [
        ("postgresql://u:s3cret%20pw@db.example:6543/app", "database app on db.example:6543", "postgresql://u:***@db.example:6543/app"),
        ("postgresql:///app?host=/tmp&port=5433", "database app on /tmp:5433", "postgresql:///app?host=/tmp&port=5433"),
        ("postgresql://u@h:1/app?host=h2&port=2&password=s3cret%20pw", "database app on h2:2", "postgresql://u:***@h2:2/app"),
        ("postgres://h1:1,h2:2/app", "database app on h1:1,h2:2", "postgresql:///app?host=h1,h2&port=1,2"),
        ("postgresql://[::1]:6000/app", "database app on [::1]:6000", "postgresql://[::1]:6000/app"),
        ("postgresql:///app", "database app on the local socket (port 5432)", "postgresql:///app?port=5432"),
    ],
)  # fmt: skip
def test_the_place_and_the_shown_url_are_where_libpq_connects(url: str, place: str, shown: str) -> None:
    parsed = StoreUrl.parse(url, environ={})
    assert (parsed.place, parsed.shown) == (place, shown)
    assert SECRET not in parsed.place + parsed.shown + repr(parsed)


def test_what_the_url_leaves_out_comes_from_libpqs_environment() -> None:
    parsed = StoreUrl.parse("postgresql:///app", environ={"PGHOST": "/run/pg", "PGPORT": "6000", "PGUSER": "me"})
    assert (parsed.place, parsed.user) == ("database app on /run/pg:6000", "me")


@pytest.mark.parametrize("scheme", ["postgresql", "POSTGRESQL", "PostgreSQL", "postgres", "POSTGRES"])
def test_the_scheme_is_read_in_any_case_and_handed_to_libpq_in_lower_case(scheme: str) -> None:
    url = f"{scheme}://u:pw@h:1/app"
    assert is_postgres_url(url)
    assert StoreUrl.parse(url).conninfo == "postgresql://u:pw@h:1/app"


@pytest.mark.parametrize("url", ["postgresql://h:x/app", "postgresql:///app?port=70000", "postgresql://h1,h2,h3/app?port=1,2"])
def test_a_port_that_is_no_port_is_refused_without_the_password(url: str) -> None:
    with pytest.raises(ValueError, match="port") as refused:
        StoreUrl.parse(url.replace("://", f"://u:{SECRET}@", 1), environ={})
    assert SECRET not in str(refused.value)
