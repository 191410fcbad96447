"""Scores in the contract's 0..1, and the fusion of keyword and vector rankings.

Hybrid search blends the two *scores*, not their ranks: ``weight * keyword + (1 - weight) *
semantic``, the semantic score calibrated to the query's spread of similarities in scope
(``calibrated_scores``) so that the blend means the same for every model. Both stay
absolute, so a weak match stays weak after fusion: the keyword score is
the share of the query's information (its idf-weighted terms) a note matches
(``adapters.keyword_index``), so a note that shares one common word with a paraphrased
question adds little, while one that matches the names and rare terms of the question adds
much. Rank fusion (RRF) gives the first keyword hit full weight however poor it is, which
is what made it lose to vector search on paraphrased questions (on the paraphrase set,
equal-weight rank fusion with TF-IDF: recall@1 0.48 against 0.88 for meaning alone).

Then two kinds of weak evidence. A note created in the period the query names ("on 8
December, 2023", "in August 2023": ``application.query_dates``) gains ``DATE_WEIGHT``
(``dated``). And context: a note written just before or after a candidate in the same group
(``Candidates.neighbours``) is usually about the same thing (the answer after a question, the
reason after a decision), so the ten best hits and their neighbours share their scores
(``with_context``). Every weight here was chosen by leaving one LoCoMo conversation out at a
time and held on the paraphrase set (``bench.retrieval_study``: bench/results/retrieval_study.md).
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import timedelta

from local_mcp_memory.application.ports import Candidate, Neighbour, Spread
from local_mcp_memory.application.query_dates import Period

HYBRID_KEYWORD_WEIGHT = 0.4
"""The keyword share of a hybrid score, chosen on LoCoMo and the paraphrase set (``bench.retrieval_study``)."""

UNNAMED_KEYWORD_SHARE = 0.25
"""The share of ``HYBRID_KEYWORD_WEIGHT`` keywords keep for a query that names nothing its
keyword hits name (``query_names``), which no neighbour lends context either: of 0, 0.25, 0.5
and 1 the one keeping hybrid at least semantic search on the three paraphrase sets, then the
best on the knowledge set's dev part (``bench.keyword_study``, docs/retrieval.md)."""

KEYWORD_EVIDENCE = 0.2
"""A keyword score below this (a note matching a fifth of the query's information or less,
typically one common word of a paraphrased question) counts as no keyword match at all."""


SPREAD_UNITS = 8.0
"""A cosine this many standard deviations above the mean similarity in scope scores 1."""

SPREAD_MIN_NOTES = 8
SPREAD_SAMPLE = 1024
"""The spread is measured on every note in scope up to this many, else on a sample."""

CONTEXT_SEEDS = 10
"""How many of the best hybrid hits lend their score to their neighbours (``with_context``)."""

CONTEXT_WEIGHT = 0.5
"""How much of a linked note's score a seed or neighbour gains: own + 0.5 * the other's."""

DATE_WEIGHT = 0.1
"""What a note created in the period the query names gains (``dated``)."""


def similarity_scores(found: Sequence[Candidate]) -> list[Candidate]:
    """Cosine similarity -> (1 + cos) / 2, clamped to 0..1."""
    return [_scored(c, (1.0 + c.score) / 2.0) for c in found]


def calibrated_scores(found: Sequence[Candidate], spread: Spread) -> list[Candidate]:
    """Cosine similarity -> how far it stands above the query's typical similarity in scope,
    ``(cos - mean) / (SPREAD_UNITS * std)``, clamped to 0..1: the same scale whatever the
    model. Models differ widely in where their cosines lie (MiniLM's unrelated notes near 0,
    multilingual-e5's near 0.8, with related ones only a few hundredths above), so a raw
    ``(1 + cos) / 2`` lets the keyword share of a blend weigh more for some models than for
    others. Fewer than ``SPREAD_MIN_NOTES`` notes say nothing of a spread: ``similarity_scores``."""
    if spread.count < SPREAD_MIN_NOTES or spread.std <= 0.0:
        return similarity_scores(found)
    unit = SPREAD_UNITS * spread.std
    return [_scored(c, (c.score - spread.mean) / unit) for c in found]


def keyword_scores(found: Sequence[Candidate]) -> list[Candidate]:
    """Keyword relevance is already a share of the query in 0..1; clamp it."""
    return [_scored(c, c.score) for c in found]


def neighbour_cosines(neighbours: Iterable[Neighbour]) -> list[Candidate]:
    """Neighbours as candidates scored by their cosine; one without a vector in the query's
    namespace gets the lowest cosine, -1."""
    return [Candidate(n.id, n.created_at, -1.0 if n.cosine is None else n.cosine) for n in neighbours]


def calibrated_neighbours(neighbours: Iterable[Neighbour], spread: Spread) -> list[Candidate]:
    """``calibrated_scores(neighbour_cosines(neighbours), spread)`` in one pass."""
    if spread.count < SPREAD_MIN_NOTES or spread.std <= 0.0:
        return similarity_scores(neighbour_cosines(neighbours))
    mean, unit = spread.mean, SPREAD_UNITS * spread.std
    out = []
    for n in neighbours:
        score = 0.0 if n.cosine is None else (n.cosine - mean) / unit
        out.append(Candidate(n.id, n.created_at, 0.0 if score < 0.0 else 1.0 if score > 1.0 else score))
    return out


def _scored(candidate: Candidate, score: float) -> Candidate:
    return Candidate(candidate.id, candidate.created_at, 0.0 if score < 0.0 else 1.0 if score > 1.0 else score)


def _order(c: Candidate) -> tuple[float, float, str]:
    return (-c.score, -c.created_at.timestamp(), c.id)


def _ranked(found: list[Candidate]) -> list[Candidate]:
    return sorted(found, key=_order)


def blend(
    semantic: list[Candidate],
    keyword: list[Candidate],
    weight: float,
    depth: int,
    exact: list[Candidate] | None = None,
) -> list[Candidate]:
    """``weight * keyword + (1 - weight) * semantic`` for every note in either ranking or in
    ``exact``, scores in 0..1, sorted highest first (ties: newer createdAt, then id).

    A ranking cut at ``depth`` says nothing exact of the notes below it: they get its lowest
    score. A ranking shorter than ``depth`` holds every note it can score; the others get 0.
    ``exact`` gives semantic scores of notes below the cut that are known anyway.
    Keyword scores under ``KEYWORD_EVIDENCE`` count as 0.
    """
    sem = {c.id: c for c in semantic}
    kw = {c.id: c for c in keyword}
    sem_floor = semantic[-1].score if len(semantic) >= depth else 0.0
    kw_floor = keyword[-1].score if len(keyword) >= depth else 0.0
    for found in exact or ():
        sem.setdefault(found.id, found)
    fused = []
    for key, found in {**kw, **sem}.items():
        s = sem[key].score if key in sem else sem_floor
        k = kw[key].score if key in kw else kw_floor
        k = k if k >= KEYWORD_EVIDENCE else 0.0
        fused.append(_scored(found, weight * k + (1.0 - weight) * s))
    return _ranked(fused)


def dated(fused: list[Candidate], period: Period | None, weight: float = DATE_WEIGHT) -> list[Candidate]:
    """Every note of ``fused`` created in ``period`` gains ``weight``; sorted again. Not
    capped, so two dated notes keep their order: a score may exceed 1 here, and
    ``with_context``, which always follows, brings the list back into 0..1. None:
    ``fused`` unchanged."""
    if period is None:
        return fused
    return _ranked([Candidate(c.id, c.created_at, c.score + weight) if period.holds(c.created_at) else c for c in fused])


def with_context(
    fused: list[Candidate], adjacent: dict[str, list[str]], weight: float = CONTEXT_WEIGHT, limit: int | None = None
) -> list[Candidate]:
    """Rescore ``fused`` (highest first, with every neighbour of the seeds in it): each seed
    (a key of ``adjacent``: one of the best hits) and each of its neighbours gains ``weight``
    times the best score across such a link; other notes keep their score. Ranked by those
    sums; when the best exceeds 1, every score is divided by it, so scores stay in 0..1
    without ties at the top (a cap at 1 made the best hit and its neighbours equal, and
    the newer neighbour then came first). ``limit``: only the first ``limit`` are returned."""
    links: dict[str, set[str]] = {}
    for seed, near in adjacent.items():
        for other in near:
            links.setdefault(seed, set()).add(other)
            links.setdefault(other, set()).add(seed)
    own = {c.id: c.score for c in fused}
    scores = []
    for found in fused:
        best = 0.0
        for other in links.get(found.id, ()):
            score = own.get(other, 0.0)
            if score > best:
                best = score
        scores.append((-(found.score + weight * best), -found.created_at.timestamp(), found.id, found))
    scores.sort(key=lambda row: row[:3])
    scale = max(1.0, -scores[0][0]) if scores else 1.0
    return [Candidate(c.id, c.created_at, -score / scale) for score, _, _, c in scores[:limit]]


SUBJECT_Z = 1.75
"""Two of the best results are about one subject when their cosine stands at least this many
standard deviations above the cosines each of them has with the other results of the window
(``newer_first``), for a question about the present ("which runner do we use?"). In standard
deviations, so the same for every model: MiniLM's unrelated notes lie near cosine 0.1 and
multilingual-e5's near 0.8, so no one cosine means "same subject" for both. Chosen with
``bench.newer_study`` (docs/retrieval.md): the best dev newer-wins that keeps LoCoMo recall."""

CHANGED_Z = 1.25
"""``SUBJECT_Z`` for a pair whose newer note speaks of a change ("now", "moved to", "raised":
``suggestions.UPDATE_CUE``): half a standard deviation less, fixed before the study."""

PAST_SUBJECT_Z = 2.5
"""``SUBJECT_Z`` for a question about the past ("when did…", "what was…":
``query_dates.asks_about_past``): such a question wants what happened, not what is true now,
so the newer of two notes needs to be plainly about the same subject to come first."""

PAST_CHANGED_Z = 2.0
"""``PAST_SUBJECT_Z`` for a newer note that speaks of a change: half a standard deviation less."""

VALUE_Z = 0.75
"""``SUBJECT_Z`` for a pair whose two notes each name a value the other does not, of a kind
both name (``suggestions.values_changed``: "The decline threshold is a score of 0.8" and
"Transactions are blocked above 0.65", "The board uses an ATmega328P" and "Rev C is built
around an ESP32-S3"), for a question about the present: a fact and its update mostly say the
same kind of thing with another value, in other words. Chosen with ``bench.newer_study`` like ``SUBJECT_Z`` (docs/retrieval.md)."""

ANSWER_DEPTH = 5
"""Two of this many best results are both among the best answers to the question (``ANSWER_Z``)."""

ANSWER_Z = 0.0
"""``VALUE_Z`` for two of the first ``ANSWER_DEPTH`` results: a fact and its update worded
alike in nothing but their subject ("The handbook is built with Jekyll", "Docs are generated
by Docusaurus 3": 0.2 standard deviations) still both answer the question best, each with
another value of one kind that few results of the window name (``ANSWER_SHARED``); both
nearer each other than to the window's average is enough then. Chosen with
``bench.newer_study`` (docs/retrieval.md)."""

ANSWER_SHARED = 3
"""For ``ANSWER_Z``, a value that this many results of the window name is context (the people
of a conversation, the product), not what changed (``suggestions.shared_values``): without
it, two turns of a conversation naming the other speaker and a place passed for an update."""

ONE_SESSION = timedelta(hours=1)
"""Two notes written less than this apart are one session (a conversation's turns a few lines
apart), not a fact and its later update."""

ANSWER_APART = ONE_SESSION
"""``ANSWER_Z`` is for two notes written at least this far apart (``ONE_SESSION``)."""

NEWER_DEPTH = 10
"""How many of the best results ``newer_first`` may reorder, whatever the topK."""

NEWER_WINDOW = 25
"""How many of the best results ``newer_first`` measures similarity against (the window)."""

NEWER_MIN_WINDOW = 5
"""Fewer results with vectors than this say nothing of a spread: ``newer_first`` leaves them."""

VALUE_MIN_WINDOW = 10
"""Fewer results with vectors than this, and two notes naming other values of one kind are
held to the bars of any other two (``newer_first``'s ``value_subject`` and ``answer_subject``
off): among six notes about limits, each naming a number ("Uploads are capped at 25 MB",
"Sessions expire after 2 hours"), every newer one stood out enough from the others to pass
for an update of "The API rate limit is 500 requests per minute" and slid it down."""


def newer_first(
    ranked: Sequence[Candidate],
    cosines: Mapping[str, Mapping[str, float]],
    adjacent: Mapping[str, Iterable[str]],
    changed: Callable[[str], bool] = lambda note_id: False,
    subject: float = SUBJECT_Z,
    changed_subject: float = CHANGED_Z,
    depth: int = NEWER_DEPTH,
    values_changed: Callable[[str, str], bool] | None = None,
    value_subject: float = VALUE_Z,
    answer_depth: int = 0,
    answer_subject: float = ANSWER_Z,
    answer_values: Callable[[str, str], bool] | None = None,
    answer_apart: timedelta = ANSWER_APART,
    asks: Callable[[str], bool] | None = None,
    rivals: Callable[[str, str], bool] | None = None,
) -> list[Candidate]:
    """``ranked`` (highest first; the window) with each of its first ``depth`` notes placed
    just above the best-ranked older one of them about the same subject; each of those then
    takes the score of its place, and the rest of ``ranked`` stays as it is.

    Two notes are about one subject when their cosine stands out from both notes' point of
    view: at least ``subject`` standard deviations above the mean cosine each has with the
    other results of the window that have a vector (the pair itself left out). In a
    conversation every turn is somewhat like many others; a fact and its update stand out
    among the other notes of a project. A note for which ``changed(id)`` holds (its text
    speaks of a change) needs ``changed_subject`` as the newer of a pair; ``changed`` is asked
    only about a pair that one threshold would take and the other not. A pair for which
    ``values_changed(newer, older)`` holds (each names a value the other does not) needs
    ``value_subject`` at most; it is asked only about a pair the other thresholds leave out,
    the newer note first; for two of the first ``answer_depth`` results (both among the best
    answers to the question) written at least ``answer_apart`` apart, ``answer_subject`` at
    most, when ``answer_values(newer, older)`` holds (default: ``values_changed``); two such
    notes written closer in time (one sitting) only when ``rivals(newer, older)`` holds too:
    they name different tools of one kind (``tool_kinds.rivals``). Two notes
    written one right after the other in a group (``adjacent``: each seed's neighbours, as
    ``with_context`` takes them) within ``ONE_SESSION``, one of which ``asks`` something
    (None: any), are context, the answer after a question, not an update: never a pair
    (``_context``). ``cosines``: every two results with a vector (``StoreMaintenance.cosines``). A result without one
    is a subject of its own; fewer than ``NEWER_MIN_WINDOW`` with one: no change.
    So an update ranks right above what it updates, which moves down one place, and
    everything else keeps its order: a re-rank between two results, never a recency boost."""
    window = [c.id for c in ranked if c.id in cosines]
    if len(window) < NEWER_MIN_WINDOW:
        return list(ranked)
    head = list(ranked[:depth])
    heads = [c.id for c in head if c.id in cosines]
    standing = _standing(cosines, window)
    context = _context(adjacent, ranked, asks)
    born = {c.id: c.created_at for c in head}
    low, high = min(subject, changed_subject), max(subject, changed_subject)
    if len(window) < VALUE_MIN_WINDOW:
        values_changed = None  # too few notes to tell a subject from a project's way of writing
    answers = {c.id for c in head[:answer_depth]} if values_changed is not None else set()
    answer_subject = min(value_subject, answer_subject)
    if values_changed is not None:
        low = min(low, value_subject)
    answer_low = min(low, answer_subject)  # for two of ``answers``
    cued: dict[str, bool] = {}
    pairs = set()

    def by_values(a: str, b: str, stands: float) -> bool:
        if values_changed is None or born[b] <= born[a]:
            return False
        if stands >= value_subject:
            return values_changed(b, a)
        return (
            stands >= answer_subject
            and a in answers
            and b in answers
            and (answer_values or values_changed)(b, a)
            and (born[b] - born[a] >= answer_apart or (rivals is not None and rivals(b, a)))
        )

    for a in heads:
        for b in heads:
            if a == b or (a, b) in context or (b, a) in context:
                continue
            bar = answer_low if a in answers and b in answers else low
            stands = standing(a, b)
            if stands < bar:
                continue
            stands = min(stands, standing(b, a))
            if stands < bar:
                continue
            if stands < high:
                if b not in cued:
                    cued[b] = changed(b)
                if stands < (changed_subject if cued[b] else subject) and not by_values(a, b, stands):
                    continue
            pairs.add((a, b))
    if not pairs:
        return list(ranked)
    order = list(head)
    for found in head:
        older = [c for c in order if (c.id, found.id) in pairs and c.created_at < found.created_at]
        if older and order.index(older[0]) < order.index(found):
            order.remove(found)
            order.insert(order.index(older[0]), found)
    return [Candidate(c.id, c.created_at, head[i].score) for i, c in enumerate(order)] + list(ranked[depth:])


def asks_something(text: str) -> bool:
    """Whether a note's text asks something: a "?" that ends a word ("ready?", "(why?)",
    "¿Qué?"), not one inside code ("WHERE id = ?", "/search?q=1"). With the note written
    right after it in its group, a question and its answer (``_context``)."""
    return _QUESTION.search(text) is not None


_QUESTION = re.compile(r"\w[)\]\"'»”’!]*[?？]+(?=[\s)\]\"'»”’.,;:!]|$)")


def _context(
    adjacent: Mapping[str, Iterable[str]], ranked: Sequence[Candidate], asks: Callable[[str], bool] | None
) -> set[tuple[str, str]]:
    """The pairs of ``adjacent`` (a seed and a note written right before or after it in its
    group) among ``ranked`` written less than ``ONE_SESSION`` apart, one of which asks
    something (``asks``; None: any): a question and the answer after it, never a fact and
    its update. Two statements written one after the other ("the limit is 100", then
    "correction: it is 500") may be a fact and its update; two neighbours written further
    apart (a group that gets a note a month) are two notes like any others."""
    born = {c.id: c.created_at for c in ranked}
    return {
        (a, b)
        for a, near in adjacent.items()
        if a in born
        for b in near
        if b in born and abs(born[a] - born[b]) < ONE_SESSION and (asks is None or asks(a) or asks(b))
    }


def _standing(cosines: Mapping[str, Mapping[str, float]], window: Sequence[str]) -> Callable[[str, str], float]:
    """``standing(a, b)``: how many of ``a``'s standard deviations its cosine with ``b`` lies
    above the mean cosine ``a`` has with the other notes of ``window`` (the pair left out).
    Each note's sums are taken once, on its first question."""
    others = len(window) - 2
    # per note: its cosines, their sum and the sum of their squares over the rest of the window
    moments: dict[str, tuple[Mapping[str, float], float, float]] = {}

    def standing(a: str, b: str) -> float:
        if a not in moments:
            row = cosines[a]
            values = [row[other] for other in window if other != a]
            moments[a] = (row, sum(values), sum(value**2 for value in values))
        row, sums, squares = moments[a]
        value = row[b]
        mean = (sums - value) / others
        variance = (squares - value * value) / others - mean * mean
        return (value - mean) / variance**0.5 if variance > 1e-12 else 0.0

    return standing


LIFT_SEEDS = 3
"""How many of the best results may each bring up one update from below ``NEWER_DEPTH``
(``brought_up``)."""

LIFT_NEAR = 3
"""An update is brought up only from among a seed's this many most similar results of the window."""

FAR_LIFT_Z = 4.0
"""``LIFT_Z`` for the rest of the first ``NEWER_DEPTH`` as seeds (``brought_up``): only a
pair that stands out plainly. Chosen with ``bench.newer_study`` (docs/retrieval.md)."""

LIFT_Z = 1.5
"""``SUBJECT_Z`` for a result brought up from below ``NEWER_DEPTH``: it must stand out this
many standard deviations from both notes' point of view, and name other values of a kind
both name. Chosen with ``bench.newer_study`` (docs/retrieval.md)."""


def brought_up(
    ranked: Sequence[Candidate],
    cosines: Mapping[str, Mapping[str, float]],
    adjacent: Mapping[str, Iterable[str]],
    values_changed: Callable[[str, str], bool],
    states: Callable[[str], bool] = lambda note_id: True,
    seeds: int = LIFT_SEEDS,
    near: int = LIFT_NEAR,
    subject: float = LIFT_Z,
    depth: int = NEWER_DEPTH,
    far_subject: float | None = None,
    asks: Callable[[str], bool] | None = None,
) -> list[Candidate]:
    """``ranked`` (highest first; the window) with, for each of its first ``seeds`` results,
    a likely update of it from below the first ``depth`` moved to just above it, each result
    then taking the score of its place: the step before ``newer_first``, which only reorders
    the first ``depth``.

    An update of a seed is a result of the window among the seed's ``near`` most similar
    there (by note-to-note cosine, not by the question), created after it, that stands out
    at least ``subject`` standard deviations from both notes' point of view (as in
    ``newer_first``), names a value the seed does not of a kind both name
    (``values_changed(newer, seed)``), and states something (``states``: a question asks,
    it updates nothing). Never a note written right before or after the seed in its group
    within ``ONE_SESSION`` when one of the two ``asks`` (``adjacent``, ``_context``). The
    old wording is often closer to the question than the new one ("Where
    do pipeline failure alerts go?": "Pipeline failures alert the #data-alerts Slack
    channel" first, "Failed DAG runs page the data on-call through Opsgenie" 20th), while
    the two notes stand out as each other's nearest. With ``far_subject``, the rest of the
    first ``depth`` are seeds too, at that bar ("The availability endpoint is GET /v1/slots"
    9th, "/v1/slots is gone; clients call GET /v2/availability" 14th, 6 standard deviations
    out). At most one per seed; fewer than
    ``NEWER_MIN_WINDOW`` results with a vector: no change."""
    window = [c.id for c in ranked if c.id in cosines]
    if len(window) < NEWER_MIN_WINDOW:
        return list(ranked)
    standing = _standing(cosines, window)
    context = _context(adjacent, ranked, asks)
    place = {c.id: n for n, c in enumerate(ranked)}
    order = list(ranked)
    moved = False
    bars = [subject] * seeds + ([] if far_subject is None else [far_subject] * (depth - seeds))
    for seed, bar in zip(ranked, bars):
        if seed.id not in cosines:
            continue
        row = cosines[seed.id]
        for b in heapq.nlargest(near, (b for b in window if b != seed.id), key=row.__getitem__):
            found = ranked[place[b]]
            if (
                place[b] < depth
                or found.created_at <= seed.created_at
                or (seed.id, b) in context
                or (b, seed.id) in context
                or standing(seed.id, b) < bar
                or standing(b, seed.id) < bar
                or not states(b)
                or not values_changed(b, seed.id)
            ):
                continue
            order.remove(found)
            order.insert(order.index(seed), found)
            moved = True
            break
    if not moved:
        return order
    return [Candidate(c.id, c.created_at, ranked[i].score) for i, c in enumerate(order)]


IMPORTANCE_WEIGHT = 0.02
"""A note's importance (0..1, SPEC §13) as a weak prior: its hybrid score gains
``IMPORTANCE_WEIGHT * (importance - 0.5)``: at most ±0.01, enough to order near ties and
never enough to lift an unrelated note over a relevant one."""


def weighted(fused: list[Candidate], importance: Mapping[str, float], weight: float = IMPORTANCE_WEIGHT) -> list[Candidate]:
    """Every note of ``fused`` gains ``weight * (importance - 0.5)`` (notes missing from
    ``importance``: 0.5); sorted again. Not capped above (``with_context`` rescales), floored at 0."""
    if all(importance.get(c.id, 0.5) == 0.5 for c in fused):
        return fused
    return _ranked([Candidate(c.id, c.created_at, max(0.0, c.score + weight * (importance.get(c.id, 0.5) - 0.5))) for c in fused])
