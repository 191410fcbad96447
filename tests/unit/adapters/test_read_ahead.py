"""``read_ahead``: items in order from a thread of their own, at most ``depth`` ahead, what
computing one raises raised in its place, and no thread outliving the block."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from local_mcp_memory.adapters.read_ahead import read_ahead


def live() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "read-ahead"]


def test_items_arrive_in_order_computed_by_another_thread() -> None:
    threads: list[threading.Thread] = []

    def items() -> Iterator[int]:
        for i in range(50):
            threads.append(threading.current_thread())
            yield i

    with read_ahead(items()) as ahead:
        assert list(ahead) == list(range(50))
    assert {thread.name for thread in threads} == {"read-ahead"} and not live()


def test_the_thread_stays_at_most_depth_items_ahead() -> None:
    taken: list[int] = []
    gate = threading.Event()

    def items() -> Iterator[int]:
        for i in range(10):
            taken.append(i)
            yield i

    with read_ahead(items(), depth=2) as ahead:
        assert next(ahead) == 0
        gate.wait(0.3)  # time to run ahead, were it not bounded
        assert len(taken) <= 1 + 2 + 1  # the one used, two waiting, one computed and held back
        assert list(ahead) == list(range(1, 10))


def test_what_computing_an_item_raises_is_raised_in_its_place() -> None:
    def items() -> Iterator[int]:
        yield 1
        yield 2
        raise ValueError("line 3: bad field")

    got = []
    with pytest.raises(ValueError, match="line 3: bad field"), read_ahead(items()) as ahead:
        for item in ahead:
            got.append(item)
    assert got == [1, 2] and not live()


def test_leaving_early_stops_the_thread_and_closes_the_source() -> None:
    closed = threading.Event()

    def items() -> Iterator[int]:
        try:
            for i in range(1_000_000):
                yield i
        finally:
            closed.set()

    with read_ahead(items()) as ahead:
        assert next(ahead) == 0
    assert closed.is_set() and not live()


def test_an_error_in_the_caller_stops_the_thread_too() -> None:
    def items() -> Iterator[int]:
        while True:
            yield 0

    with pytest.raises(KeyError), read_ahead(items()) as ahead:
        next(ahead)
        raise KeyError("writing failed")
    assert not live()
