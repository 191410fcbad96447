"""``long_lived.built``: structures a store keeps for its lifetime leave the collector's full
passes once enough is built, and what was garbage before that goes first."""

from __future__ import annotations

import gc
import weakref

from local_mcp_memory.adapters import long_lived


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def _counted_from_zero() -> None:
    long_lived.built(long_lived.FREEZE_AFTER)  # freezes whatever was counted before


def test_less_than_the_bar_freezes_nothing() -> None:
    _counted_from_zero()
    frozen = gc.get_freeze_count()
    kept = {n: [n] for n in range(1000)}
    long_lived.built(long_lived.FREEZE_AFTER - 1)
    assert gc.get_freeze_count() == frozen
    assert any(o is kept for o in gc.get_objects())


def test_reaching_the_bar_freezes_what_lives_and_collects_what_does_not() -> None:
    _counted_from_zero()
    kept = {n: [n] for n in range(1000)}
    a, b = _Node(), _Node()
    a.other, b.other = b, a  # a cycle, garbage once the names go
    gone = weakref.ref(a)
    del a, b
    long_lived.built(long_lived.FREEZE_AFTER // 2)
    assert gone() is not None  # not yet: half the bar
    long_lived.built(long_lived.FREEZE_AFTER // 2)
    assert gone() is None  # collected before the freeze, not frozen with it
    assert gc.get_freeze_count() > 0
    assert not any(o is kept for o in gc.get_objects())  # out of the collector's passes
    assert kept[999] == [999]  # and still what it was
