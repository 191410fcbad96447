"""SharedQueryEmbedder: queries waiting at the same time share one call; each caller gets
its own vector or exactly the failure it would have had alone."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from local_mcp_memory.adapters.embedders.shared_queries import SharedQueryEmbedder
from local_mcp_memory.application.errors import EmbedderRejected, EmbedderUnavailable
from local_mcp_memory.application.ports import EmbedKind
from tests.fakes.hashing_embedder import HashingEmbedder


class GatedEmbedder:
    """A hashing embedder that records its calls, holds the first one until ``release``,
    and fails a call holding a text that ``fails`` names (as a provider refusing one input
    fails the whole request)."""

    def __init__(self, fails: Callable[[str], BaseException | None] = lambda text: None) -> None:
        self.calls: list[tuple[list[str], EmbedKind]] = []
        self.entered = threading.Event()
        self.release = threading.Event()
        self._fails = fails
        self._hashing = HashingEmbedder(dim=16)

    def embed(self, texts: Sequence[str], kind: EmbedKind = "passage") -> np.ndarray:
        self.calls.append((list(texts), kind))
        if len(self.calls) == 1:
            self.entered.set()
            assert self.release.wait(10)
        for text in texts:
            if (failure := self._fails(text)) is not None:
                raise failure
        return self._hashing.embed(texts, kind)


def _queries_behind_a_running_call(
    embedder: GatedEmbedder, texts: list[str]
) -> tuple[dict[str, object], list[threading.Thread]]:
    """``texts[0]`` embedded as a query and held in the model; the others asked meanwhile
    (each on its own thread), their outcomes (vector or exception) by text once joined."""
    shared = SharedQueryEmbedder(embedder)
    outcomes: dict[str, object] = {}

    def ask(text: str) -> None:
        try:
            outcomes[text] = shared.embed([text], "query")
        except BaseException as exc:  # noqa: BLE001 - the outcome under test
            outcomes[text] = exc

    first = threading.Thread(target=ask, args=(texts[0],))
    first.start()
    assert embedder.entered.wait(10)
    others = [threading.Thread(target=ask, args=(text,)) for text in texts[1:]]
    for thread in others:
        thread.start()
    _wait_until(lambda: len(shared._waiting) == len(others))
    embedder.release.set()
    threads = [first, *others]
    for thread in threads:
        thread.join(10)
    return outcomes, threads


def _wait_until(condition: Callable[[], bool]) -> None:
    done = threading.Event()
    for _ in range(1000):
        if condition():
            return
        done.wait(0.01)
    raise AssertionError("condition not reached")


def test_queries_asked_while_a_call_runs_share_the_next_call() -> None:
    embedder = GatedEmbedder()
    texts = ["first query", "deploy friday", "gateway timeout", "billing retries", "painting class"]
    outcomes, _ = _queries_behind_a_running_call(embedder, texts)
    assert [(sorted(texts), kind) for texts, kind in embedder.calls] == [(["first query"], "query"), (sorted(texts[1:]), "query")]
    alone = HashingEmbedder(dim=16)
    for text in texts:
        assert np.array_equal(np.asarray(outcomes[text]), alone.embed([text], "query"))


def test_a_call_shares_at_most_max_texts_and_the_rest_follow() -> None:
    embedder = GatedEmbedder()
    shared = SharedQueryEmbedder(embedder, max_texts=2)
    results: dict[str, object] = {}

    def ask(text: str) -> None:
        results[text] = shared.embed([text], "query")

    threads = [threading.Thread(target=ask, args=(f"query {i}",)) for i in range(6)]
    threads[0].start()
    assert embedder.entered.wait(10)
    for waiting, thread in enumerate(threads[1:], start=1):
        thread.start()
        _wait_until(lambda: len(shared._waiting) == waiting)
    embedder.release.set()
    for thread in threads:
        thread.join(10)
    assert [len(texts) for texts, _ in embedder.calls] == [1, 2, 2, 1]
    assert sorted(results) == [f"query {i}" for i in range(6)]


def test_a_failing_text_fails_only_its_caller() -> None:
    refused = EmbedderRejected("openai", 400, "input 2 is not valid")
    embedder = GatedEmbedder(fails=lambda text: refused if text == "bad query" else None)
    texts = ["first query", "good one", "bad query", "another good one"]
    outcomes, _ = _queries_behind_a_running_call(embedder, texts)
    assert outcomes["bad query"] is refused
    for text in ("first query", "good one", "another good one"):
        assert np.asarray(outcomes[text]).shape == (1, 16)
    # the shared call failed; each of its callers asked alone
    assert sorted(texts for texts, _ in embedder.calls[2:]) == [["another good one"], ["bad query"], ["good one"]]


def test_a_failing_call_of_one_query_is_not_asked_again() -> None:
    down = EmbedderUnavailable("local", None, "the local model failed to run")
    embedder = GatedEmbedder(fails=lambda text: down)
    embedder.release.set()
    with pytest.raises(EmbedderUnavailable) as raised:
        SharedQueryEmbedder(embedder).embed(["a query"], "query")
    assert raised.value is down
    assert len(embedder.calls) == 1


def test_when_every_text_fails_every_caller_gets_its_error() -> None:
    embedder = GatedEmbedder(fails=lambda text: EmbedderUnavailable("local", None, f"no model for {text}"))
    texts = ["first query", "second", "third"]
    outcomes, _ = _queries_behind_a_running_call(embedder, texts)
    for text in texts:
        assert isinstance(outcomes[text], EmbedderUnavailable) and text in str(outcomes[text])


def test_a_leader_interrupted_hands_its_callers_on() -> None:
    """The thread running a shared call is interrupted (a ``BaseException``): it raises,
    and the queries of its call and those waiting still get their vectors."""
    embedder = GatedEmbedder(fails=lambda text: KeyboardInterrupt() if text == "first query" else None)
    texts = ["first query", "second", "third"]
    outcomes, _ = _queries_behind_a_running_call(embedder, texts)
    assert isinstance(outcomes["first query"], KeyboardInterrupt)
    assert np.asarray(outcomes["second"]).shape == np.asarray(outcomes["third"]).shape == (1, 16)


def test_passages_and_lists_go_straight_through() -> None:
    embedder = GatedEmbedder()
    embedder.release.set()
    shared = SharedQueryEmbedder(embedder)
    shared.embed(["a note"], "passage")
    shared.embed(["two", "queries"], "query")
    assert embedder.calls == [(["a note"], "passage"), (["two", "queries"], "query")]


def test_sharing_starts_no_thread_and_leaves_none_behind() -> None:
    before = set(threading.enumerate())
    embedder = GatedEmbedder()
    _, threads = _queries_behind_a_running_call(embedder, ["one", "two", "three", "four"])
    assert not any(t.is_alive() for t in threads)
    assert set(threading.enumerate()) == before
