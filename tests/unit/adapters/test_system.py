from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from local_mcp_memory.adapters.system import OsProjectResolver
from local_mcp_memory.domain.errors import InvalidValue
from tests.strategies import opaque_project_ids, relative_paths

resolver = OsProjectResolver()
fixture_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)


@given(opaque_project_ids)
def test_opaque_ids_pass_through_unchanged(raw: str) -> None:
    assert resolver.canonical(raw).value == raw


@fixture_ok
@given(relative_paths)
def test_canonicalization_is_idempotent(tmp_path: Path, rel: str) -> None:
    first = resolver.canonical(str(tmp_path / rel)).value
    assert resolver.canonical(first).value == first


@fixture_ok
@given(relative_paths)
def test_tilde_expands_to_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rel: str) -> None:
    home = tmp_path.resolve() / "home"
    monkeypatch.setenv("HOME", str(home))
    assert resolver.canonical(f"~/{rel}").value == os.path.normpath(f"{home}/{rel}")


def test_symlinks_are_resolved(tmp_path: Path) -> None:
    real = tmp_path.resolve() / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    assert resolver.canonical(str(tmp_path / "link")).value == str(real)
    assert resolver.canonical(str(tmp_path / "link" / ".." / "real")).value == str(real)


def test_an_unresolvable_path_falls_back_to_the_absolute_path(tmp_path: Path) -> None:
    loop = tmp_path.resolve() / "loop"
    loop.symlink_to(loop)
    assert resolver.canonical(str(loop)).value == str(loop)
    missing = tmp_path.resolve() / "missing" / "x"
    assert resolver.canonical(str(missing) + "/").value == str(missing)


def test_relative_paths_are_made_absolute_against_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolver.canonical("./proj").value == str(tmp_path.resolve() / "proj")
    assert resolver.canonical(".").value == str(tmp_path.resolve())


def test_an_unknown_user_home_is_refused() -> None:
    with pytest.raises(InvalidValue, match="known user"):
        resolver.canonical("~no-such-user-xyz/project")
