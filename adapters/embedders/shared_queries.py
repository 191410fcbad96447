"""``SharedQueryEmbedder``: search queries that wait for the model at the same time are
embedded in one call.

A short query costs the local model little more per text in a batch than alone, less in
all: on two cores with other work, 13 tokens alone take about 8.6 ms of CPU, in calls of
4 to 16 queries about 6 ms each (``bench.query_batches``). Each search of a busy HTTP
server embedded its query alone; now the first query runs at once, on its caller's thread,
and the queries that arrive while it runs form the next call, run by the first of their
callers when the call before ends: no thread of its own, no added wait, one call at a time.
The wrapped embedder batches a call as it batches any texts (the local model: sorted by
length, at most ``batch_tokens`` padded tokens a batch); padding leaves a text's vector as it
was alone (the attention mask). With int8 products the local model runs each text alone,
two at a time: a shared call then saves no model work.

Only single-text ``query`` calls are shared; passages and lists go straight through.
Failures: when a shared call fails, each of its callers embeds its text again alone, so
each gets exactly the error (or the vector) it would have had alone, and no other call is
touched. A caller that leads a call and is interrupted (``BaseException``) hands its
callers the same way. Nothing runs in the background: a closing server has only its
request threads to wait for.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import attrs

from local_mcp_memory.application.ports import Embedder, EmbedKind, Vector

MAX_TEXTS = 32
"""Queries shared by one call, at most (the local model splits them further by tokens)."""


@attrs.define(eq=False)
class _Query:
    """A caller's text and, once known, its outcome: its vector, the failure of a call of
    it alone, ``alone`` (embed it again alone), or ``lead`` (run this call of waiting
    queries, its own first)."""

    text: str
    ready: threading.Event = attrs.field(factory=threading.Event)
    vector: Sequence[Vector] | None = None
    failure: Exception | None = None
    alone: bool = False
    lead: list[_Query] | None = None


class SharedQueryEmbedder:
    """Implements ``application.ports.Embedder`` over ``embedder`` (``wrapped``), sharing
    calls as the module says."""

    def __init__(self, embedder: Embedder, *, max_texts: int = MAX_TEXTS) -> None:
        self.wrapped = embedder
        self._max_texts = max_texts
        self._lock = threading.Lock()
        self._running = False
        self._waiting: list[_Query] = []

    def embed(self, texts: Sequence[str], kind: EmbedKind = "passage") -> Sequence[Vector]:
        if kind != "query" or len(texts) != 1:
            return self.wrapped.embed(texts, kind)
        query = _Query(texts[0])
        with self._lock:
            if self._running:
                self._waiting.append(query)
            else:
                self._running = True
                query.lead = [query]
        if query.lead is None:
            query.ready.wait()
        if query.lead is not None:
            self._run(query.lead)
        if query.failure is not None:
            raise query.failure
        if query.alone:
            return self.wrapped.embed(texts, kind)
        assert query.vector is not None
        return query.vector

    def _run(self, call: list[_Query]) -> None:
        """Embed ``call`` (its first query is this thread's), hand the next call to the first
        of its callers, then wake the others of this one."""
        try:
            vectors = self.wrapped.embed([q.text for q in call], "query")
            if len(call) == 1:  # the answer as it came, for the caller's checks
                call[0].vector = vectors
            elif len(vectors) == len(call):  # else each caller asks alone
                for row, query in enumerate(call):
                    query.vector = vectors[row : row + 1]
        except Exception as exc:
            if len(call) == 1:  # its own failure: as it would have failed alone
                call[0].failure = exc
        finally:
            for query in call:
                if query.vector is None and query.failure is None:
                    query.alone = True
            with self._lock:
                following, self._waiting = self._waiting[: self._max_texts], self._waiting[self._max_texts :]
                if following:
                    following[0].lead = following
                    following[0].ready.set()
                else:
                    self._running = False
            for query in call[1:]:
                query.ready.set()
