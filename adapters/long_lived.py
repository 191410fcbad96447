"""What a store builds to keep for its lifetime, moved out of the cyclic garbage collector's
full passes.

A keyword index holds a dict per term of the notes holding it. Python's collector walks
every entry of those in each full pass, holding the interpreter: no request runs meanwhile.
A server holding a 100k-note project's index paid 50-80 ms a pass, and one holding the
indexes of 200 projects of 5,000 notes 150-250 ms, every few seconds of searching (a probe
on ``gc.callbacks``; sixteen clients all waited through each). Such structures hold no
cycles: reference counting frees them whatever the collector does. So once a store has built
enough of them since the last time (``FREEZE_AFTER`` notes), ``built`` runs one full pass
(nothing that is garbage now stays) and freezes every object then alive (``gc.freeze``):
later passes skip them. A frozen object that becomes garbage in a cycle later is never
collected: the pass before each freeze keeps that to objects of requests in flight at that
moment, once per ``FREEZE_AFTER`` notes built.
"""

from __future__ import annotations

import gc
import threading

FREEZE_AFTER = 20_000
"""Notes built into long-lived structures between two freezes: the pass before a freeze walks
about what was built since the last one (a few milliseconds), and no more than one freeze
comes of every 20,000 notes a store loads."""

_lock = threading.Lock()
_since = 0


def built(notes: int) -> None:
    """A structure over ``notes`` notes was built and will live as long as its store."""
    global _since
    with _lock:
        _since += notes
        if _since < FREEZE_AFTER:
            return
        _since = 0
    gc.collect()
    gc.freeze()
