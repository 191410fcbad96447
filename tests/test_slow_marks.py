"""The slow mark's lists (tests/conftest.py) name rooms and modules that exist: a room or a
module renamed or moved away would otherwise silently join the quick run."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import SLOW_MODULES, SLOW_PARAMETERS, SLOW_ROOMS

TESTS = Path(__file__).resolve().parent


def test_every_slow_room_is_a_folder_of_the_integration_tests() -> None:
    assert sorted(room for room in SLOW_ROOMS if not (TESTS / "integration" / room).is_dir()) == []


def test_every_slow_module_is_a_test_module() -> None:
    modules = {path.name for path in TESTS.rglob("test_*.py") if "node_modules" not in path.parts}
    assert sorted((SLOW_MODULES | SLOW_PARAMETERS.keys()) - modules) == []
