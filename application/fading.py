"""Fading (SPEC §13): a note with an expiry that is read has its expiry moved out.

Use cases record the notes they answer with (``ReadLog.saw``: only those with an
``expiresAt`` count, so ordinary reads cost nothing); the log writes them in one batch
through ``NoteWriter.prolong`` — from a background thread shortly after the answer when the
composition root gives it a ``delay``, else on ``flush``/``close``. The store decides each
new expiry on the note as stored at that moment (``Note.prolonged``), so a note deleted or
changed meanwhile is never brought back or undone. A failed batch is handed to ``on_error``
(the composition root logs it) and dropped: fading is best effort and never fails a read.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence

from local_mcp_memory.application.errors import StoreError
from local_mcp_memory.domain.identifiers import NoteId
from local_mcp_memory.domain.note import Note

Prolong = Callable[[Sequence[NoteId]], int]
OnError = Callable[[Exception, int], None]


def _raise(error: Exception, _notes: int) -> None:
    raise error


class ReadLog:
    def __init__(self, prolong: Prolong, delay: float | None = None, on_error: OnError = _raise) -> None:
        """``prolong``: writes a batch (``NoteWriter.prolong`` at the current instant).
        ``delay``: seconds a background thread waits after a read before writing the batch
        (None: only ``flush`` and ``close`` write). ``on_error(error, notes)``: told of a
        batch that failed (by default the error is raised from ``flush``)."""
        self._prolong = prolong
        self._delay = delay
        self._on_error = on_error
        self._pending: dict[NoteId, None] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._thread: threading.Thread | None = None

    def saw(self, notes: Iterable[Note]) -> None:
        with self._lock:
            before = len(self._pending)
            for note in notes:
                if note.expires_at is not None:
                    self._pending[note.id] = None
            added = len(self._pending) > before
            if added and self._delay is not None and not self._closed and self._thread is None:
                self._thread = threading.Thread(target=self._run, name="fading", daemon=True)
                self._thread.start()
        if added:
            self._wake.set()

    def flush(self) -> int:
        """Write the pending batch now; how many notes were prolonged."""
        with self._lock:
            batch, self._pending = list(self._pending), {}
        if not batch:
            return 0
        try:
            return self._prolong(batch)
        except StoreError as exc:
            self._on_error(exc, len(batch))
            return 0

    def close(self) -> None:
        """Stop the background thread and write what is pending."""
        with self._lock:
            self._closed = True
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join(timeout=10)
        self.flush()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            if self._closed:
                return
            self._wake.clear()
            threading.Event().wait(self._delay or 0)  # gather the reads of a burst into one batch
            if self._closed:
                return
            try:
                self.flush()
            except Exception as exc:  # the thread must outlive any one batch's failure
                self._on_error(exc, 0)
