"""``read_ahead``: the items of an iterable computed by a thread of their own, at most
``depth`` ahead of the one using them, so that preparing the next batch of a bulk write
(decoding, hashing, encoding: Python holding the interpreter) overlaps writing the current
one (the database working while this process waits for it, the interpreter released).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

_DONE = object()


@contextlib.contextmanager
def read_ahead(items: Iterable[T], depth: int = 1) -> Iterator[Iterator[T]]:
    """An iterator over ``items`` in their order, each computed (``next``) by a thread of
    this block while the caller uses the ones before it, at most ``depth`` waiting. What
    computing an item raises is raised by the iterator in the caller's thread, in its
    place (the items before it are delivered first; none after). Leaving the block, by the
    end, an error or ``break``, stops the thread: it computes at most the item it is on,
    which is dropped, and is joined before the block is left."""
    waiting: queue.Queue[tuple[object, BaseException | None]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        source = iter(items)
        try:
            for item in source:
                if not _offer(waiting, stop, (item, None)):
                    return
        except BaseException as exc:  # handed over to the caller's thread, raised there
            _offer(waiting, stop, (_DONE, exc))
            return
        finally:
            close = getattr(source, "close", None)  # a generator stopped early runs its cleanup here
            if close is not None:
                close()
        _offer(waiting, stop, (_DONE, None))

    def delivered() -> Iterator[T]:
        while True:
            item, failure = waiting.get()
            if failure is not None:
                raise failure
            if item is _DONE:
                return
            yield item  # type: ignore[misc]

    thread = threading.Thread(target=produce, name="read-ahead", daemon=True)
    thread.start()
    try:
        yield delivered()
    finally:
        stop.set()
        while thread.is_alive():  # an item offered meanwhile is taken, so the offer ends
            with contextlib.suppress(queue.Empty):
                waiting.get(timeout=0.05)
        thread.join()


def _offer(waiting: queue.Queue, stop: threading.Event, entry: tuple[object, BaseException | None]) -> bool:
    """Put ``entry`` once there is room; False, and nothing put, once ``stop`` is set."""
    while not stop.is_set():
        try:
            waiting.put(entry, timeout=0.05)
            return True
        except queue.Full:
            continue
    return False
