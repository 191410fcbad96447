"""The HTTP server's settings from the environment, and the token rules for a public bind."""

from __future__ import annotations

import os

import pytest

from local_mcp_memory.entrypoints.http.serve import Tuning, default_workers, public_token_problem, token_in_force


def test_durations_default_to_30_s_for_a_body_and_an_hour_for_a_session() -> None:
    tuning = Tuning.from_environ({})
    assert (tuning.body_timeout, tuning.session_idle) == (30.0, 3600.0)


@pytest.mark.parametrize(("cores", "workers"), [(None, 4), (1, 4), (2, 4), (3, 6), (4, 8), (64, 8)])
def test_worker_threads_default_to_twice_the_cores_from_4_to_8(cores: int | None, workers: int) -> None:
    assert default_workers(cores) == workers


def test_worker_threads_set_in_the_environment_win_over_the_default() -> None:
    assert Tuning.from_environ({"MCP_MEMORY_HTTP_WORKERS": "12"}).workers == 12
    assert Tuning.from_environ({}).workers == default_workers(os.cpu_count())


@pytest.mark.parametrize("raw", ["0", "-1", "x", "1.5", " ", "²", "٣", "9" * 5000])
def test_worker_threads_that_are_not_a_positive_integer_are_refused_naming_the_variable(raw: str) -> None:
    with pytest.raises(ValueError, match="MCP_MEMORY_HTTP_WORKERS must be a positive integer"):
        Tuning.from_environ({"MCP_MEMORY_HTTP_WORKERS": raw})


def test_durations_take_fractions_of_a_second() -> None:
    tuning = Tuning.from_environ({"MCP_MEMORY_HTTP_BODY_TIMEOUT": "2.5", "MCP_MEMORY_HTTP_SESSION_IDLE": " 90 "})
    assert (tuning.body_timeout, tuning.session_idle) == (2.5, 90.0)
    tuning = Tuning.from_environ({"MCP_MEMORY_HTTP_BODY_TIMEOUT": "0.1", "MCP_MEMORY_HTTP_SESSION_IDLE": "2592000"})
    assert (tuning.body_timeout, tuning.session_idle) == (0.1, 2_592_000.0)


@pytest.mark.parametrize("raw", ["0", "-1", "soon", "nan", "inf", "1e999", "0x10", "1e-300", "0.01", "١٢", "1_0", "2592001", ".5", "5."])
@pytest.mark.parametrize("name", ["MCP_MEMORY_HTTP_BODY_TIMEOUT", "MCP_MEMORY_HTTP_SESSION_IDLE"])
def test_a_duration_not_written_in_ascii_digits_from_a_tenth_of_a_second_to_30_days_is_refused_naming_the_variable(name: str, raw: str) -> None:
    with pytest.raises(ValueError, match=name):
        Tuning.from_environ({name: raw})


@pytest.mark.parametrize(
    ("token", "problem"),
    [
        (None, "without a token"),
        ("fifteen-chars-x", "with a token of 15 characters (at least 16 are needed)"),
        ("sixteen chars ok", "with a token that contains whitespace"),
        ("sixteen-chars-ok\n", "with a token that contains whitespace"),
        ("sixteen-chars-ok", None),
        ("é" * 16, None),
    ],
)
def test_a_public_bind_needs_a_token_of_16_characters_without_whitespace(token: str | None, problem: str | None) -> None:
    assert public_token_problem(token) == problem


@pytest.mark.parametrize(
    ("environ", "config", "in_force"),
    [
        ("env-token", "config-token", "env-token"),
        (None, "config-token", "config-token"),
        ("", "config-token", "config-token"),
        (" \t", "config-token", "config-token"),
        (" \t", "  ", None),
        (None, None, None),
    ],
)
def test_a_blank_token_counts_as_none_and_the_environment_wins(environ: str | None, config: str | None, in_force: str | None) -> None:
    assert token_in_force(environ, config) == in_force
