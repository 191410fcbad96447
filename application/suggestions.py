"""Which older notes a new note likely replaces: ``add_note``'s ``possiblySupersedes``.

No model but the embedder's: one store search with the new note's vector (it is embedded
anyway) for the ``DEPTH`` closest notes of its project created before it, then a small scored
decision over them (``likely_replaced``): each candidate gets the chance that the new note
replaces it, from nine features (``pair_features``) weighed by a logistic regression
(``WEIGHTS``); the likeliest is named when its chance is at least ``THRESHOLD``, and the next
likeliest beside it at ``SECOND_THRESHOLD`` (the closest older note is often a related note
that already names the new state, the old one lying second). The features hold for any model
and any project: the cosine in the model's own units (``excess``, and standard deviations
above the new note's mean cosine with the project's notes), the subject words the two texts
share, whether they differ in values (numbers, versions, names) or in a negation, a change
word in the new text (``UPDATE_CUE``), and whether the candidate already names the new note's
values (then it is a related note saying the new state, not the old one). Exact repeats of
the text are never named (dedup on write catches those in one group). The agent decides: the
names are suggestions. Weights and thresholds fitted on the dev part of the knowledge-update
set, leaving one project out to choose the thresholds (``bench.replace_fit``,
docs/retrieval.md).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

import attrs

from local_mcp_memory.application.ports import NO_SPREAD, CandidateQuery, Candidates, Spread, Vector
from local_mcp_memory.application.ranking import SPREAD_MIN_NOTES, SPREAD_SAMPLE
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import CanonicalProjectId, Namespace
from local_mcp_memory.domain.note import Note, NoteFilter

Older = tuple[str, str, float]
"""An older note: its id, its text and its cosine with the new note's vector."""


def excess(cosine: float, spread: Spread) -> float:
    """How far ``cosine`` lies from the new note's mean cosine with the project's notes
    towards 1 (an identical text): ``(cosine - mean) / (1 - mean)``. Models differ in where
    unrelated texts lie (MiniLM near 0.1, multilingual-e5 near 0.8), not in this. A mean of
    one note is that note's own cosine: then the cosine itself."""
    if spread.count < 2 or spread.mean >= 1.0:
        return cosine
    return (cosine - spread.mean) / (1.0 - spread.mean)


def standing(cosine: float, spread: Spread) -> float:
    """How many standard deviations ``cosine`` lies above the new note's mean cosine with the
    project's notes, within [-3, 8]; ``UNKNOWN_STANDING`` when fewer than ``SPREAD_MIN_NOTES``
    notes say nothing of a spread."""
    if spread.count < SPREAD_MIN_NOTES or spread.std <= 0.0:
        return UNKNOWN_STANDING
    return min(8.0, max(-3.0, (cosine - spread.mean) / spread.std))


UNKNOWN_STANDING = 2.0
"""``standing`` of a project too small to have a spread: a middling value, neither for nor against."""

DEPTH = 5
"""How many of the project's notes closest to the new one the store search returns; each
older one among them is judged."""

_CHANGE_WORDS = (
    r"now|no longer|not any ?more|anymore|instead|replac\w*|switch\w*|moved|moves|migrat\w*|upgrad\w*|"
    r"downgrad\w*|bump\w*|raised|lowered|increased|decreased|reduced|dropped|changed|took over|rewr\w*|"
    r"ported|since|retired|deprecated|no more|went up|went down|extended|shortened|lengthened|"
    r"relicensed|slipped|cancelled|canceled|abandoned|nerfed|climbed|rebuilt|became|from now on"
)
UPDATE_CUE = re.compile(  # the lookahead on the words' first letters only spares trying each word everywhere (twice as fast)
    rf"\b(?=[{''.join(sorted({word[0] for word in _CHANGE_WORDS.split('|')}))}])({_CHANGE_WORDS})\b",
    re.IGNORECASE,
)
"""Words with which a note says that something changed."""

NEGATION = re.compile(r"\b(not|no|never|none|without|cannot|disabled|off)\b|n't\b", re.IGNORECASE)
"""Words with which a note says that something is not so."""

_TOKEN = re.compile(r"[^\W_](?:[\w.\-/:+#@]*[^\W_])?")
_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty "
    "sixty hundred thousand million billion half double twice once daily weekly monthly hourly nightly".split()
)
_STOPWORDS = frozenset(
    "a an the and or but if then else of to in on at by for with from into onto over under about as is are was "
    "were be been being am do does did done has have had having it its it's this that these those there here "
    "we our us you your they their them he she his her i my me so such than too very can could should would "
    "will shall may might must also just only all any each every some more most other same what which who whom "
    "whose when where why how per via up down out off again still yet get gets got go goes went use uses used "
    "using make makes made now not no never instead".split()
)


@functools.lru_cache(maxsize=8192)
def _stem(word: str) -> str:
    """A crude stem for plain words: without a plural "s", at most ``STEM`` letters, so
    "limits", "limited" and "limit", "orchestration" and "orchestrated" meet."""
    if not word.isalpha():
        return word
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:STEM]


STEM = 5
"""How many letters of a plain word ``_stem`` keeps."""


def _is_value(token: str, lowered: str, marked: bool, starts_sentence: Callable[[], bool]) -> bool:
    """A token that names a value: a number, a version, a path or address (``marked``: a digit
    or one of ``.-/:+#@``), a number word, or a name (capitalised other than at a sentence's
    start, or mixed case like "GitHub")."""
    if marked or lowered in _NUMBER_WORDS:
        return True
    if lowered == token:
        return False
    return token[1:] != lowered[1:] or not starts_sentence()


_VALUE_MARK = re.compile(r"[\d.\-/:+#@]")


@attrs.frozen
class _Reading:
    """What ``pair_features`` reads in one text (``_read``)."""

    words: frozenset[str]
    """Content words: lower case, stemmed, no stop words; a compound like "per-key" or
    "infra/terraform" also as its parts."""
    values: frozenset[str]
    """The content words that name values (``_is_value``)."""
    first: str
    """The first content word: most often what the note is about ("Warehouse sync is…")."""
    kinds: frozenset[str]
    """Which kinds of value it names: "version" (3.12, v2), "number" (600, two, 30%), "name"."""
    negated: bool
    """Whether it says "not", "no", "never"… (``NEGATION``)."""


def _starts_sentence(text: str, at: int) -> bool:
    """Whether the word at ``at`` begins ``text``, a sentence or a line of it (after the marks
    of a markdown heading, list item or quote: "# Rollback", "- Revert the tag")."""
    at -= 1
    while at >= 0 and (text[at].isspace() or text[at] in _LINE_MARKS):
        if text[at] == "\n":
            return True
        at -= 1
    return at < 0 or text[at] in ".!?;:"


_LINE_MARKS = "#>*-+"


READ_CHARS = 500
"""How much of a text ``pair_features`` reads: what a note is about is said early, and a long
note must not make add_note slow."""


def _read(text: str) -> _Reading:
    """``text`` read for ``pair_features``: its first ``READ_CHARS`` (``_read_head``)."""
    return _read_head(text[:READ_CHARS])


@functools.lru_cache(maxsize=4096)
def _read_head(text: str) -> _Reading:
    """Kept for the next adds, whose candidates are often the same notes; keyed by at most
    ``READ_CHARS`` characters, so the cache stays small whatever the notes' size."""
    words, values, kinds, first = set(), set(), set(), ""
    for match in _TOKEN.finditer(text):
        token = match.group()
        lowered = token.lower()
        if lowered in _STOPWORDS:
            continue
        key = _stem(lowered)
        first = first or key
        words.add(key)
        marked = _VALUE_MARK.search(token) is not None
        if _is_value(token, lowered, marked, lambda: _starts_sentence(text, match.start())):
            values.add(key)
            kinds.add(_kind(token, lowered))
        parts = _PARTS.split(lowered) if marked or "_" in token else ()
        if len(parts) > 1:
            words.update(_stem(part) for part in parts if part and part not in _STOPWORDS and not part.isdigit())
    negated = bool(NEGATION.search(text))
    return _Reading(frozenset(words), frozenset(values), first, frozenset(kinds), negated)


def _kind(token: str, lowered: str) -> str:
    """The kind of value a value token names: "version" (3.12, v2), "number" (600, two, 30%) or "name"."""
    if _VERSION.fullmatch(token):
        return "version"
    if _DIGIT.search(token) or lowered in _NUMBER_WORDS:
        return "number"
    return "name"


def value_spans(text: str) -> list[tuple[int, int, str]]:
    """Where ``text`` names values, as ``pair_features`` reads them (``_is_value``): each
    value token's start, end and kind (``_kind``), in order. For studies that blank the
    values out of a note (``bench.masked_fit``)."""
    spans = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        lowered = token.lower()
        marked = _VALUE_MARK.search(token) is not None
        if lowered not in _STOPWORDS and _is_value(token, lowered, marked, lambda: _starts_sentence(text, match.start())):
            spans.append((match.start(), match.end(), _kind(token, lowered)))
    return spans


_DIGIT = re.compile(r"\d")
_VERSION = re.compile(r"v?\d+(\.\d+)+|v\d+", re.IGNORECASE)
_PARTS = re.compile(r"[.\-/:+#@_]+")


def values_changed(new: str, old: str, context: frozenset[str] = frozenset()) -> bool:
    """Whether each of two texts names a value the other does not (a number, a version, a
    name), of a kind both name: "100 requests a minute" and "600 calls a minute", "The board
    uses an ATmega328P" and "Rev C is built around an ESP32-S3" — what a fact and its update
    mostly are (``ranking.newer_first``); values in ``context`` (``shared_values``) count for
    neither. Reads the first ``READ_CHARS`` of each, and keeps the reading, as
    ``pair_features`` does."""
    newer, older = _read(new), _read(old)
    return (
        bool(newer.kinds & older.kinds)
        and bool(newer.values - context - older.words)
        and bool(older.values - context - newer.words)
    )


def shared_values(texts: Iterable[str], at_least: int) -> frozenset[str]:
    """The values (as ``values_changed`` reads them) that at least ``at_least`` of ``texts``
    name: what many results name is their context (the people talking, the product), not
    what changed between two of them."""
    counts: dict[str, int] = {}
    for text in texts:
        for value in _read(text).values:
            counts[value] = counts.get(value, 0) + 1
    return frozenset(value for value, count in counts.items() if count >= at_least)


def values_added(new: str, old: str) -> bool:
    """Whether ``new`` names every value ``old`` names (one at least) and another that is a
    number, a version or a path: "/v1/slots is gone; clients call GET /v2/availability" after
    "The availability endpoint is GET /v1/slots" — an update that names what it replaces,
    which ``values_changed`` misses. Not for names alone: in a conversation, a turn that
    names the same person and one more is no update. Reads as ``values_changed`` does."""
    newer, older = _read(new), _read(old)
    if not older.values or not older.values <= newer.words:
        return False
    return any(_DIGIT.search(value) or value in _NUMBER_WORDS for value in newer.values - older.words)


FEATURES = ("excess", "standing", "overlap", "head", "known", "changed", "negation", "cue", "kind")
"""The names of ``pair_features``' columns, in order (``WEIGHTS`` follows them)."""

def pair_features(text: str, similar: Sequence[Older], spread: Spread = NO_SPREAD) -> list[list[float]]:
    """Per older note of ``similar`` (closest first), the features of "``text`` replaces it",
    in the order of ``FEATURES``:

    - ``excess``, ``standing``: its cosine with the new note in the model's own units;
    - ``overlap``: the subject words the two texts share, each weighed by how rare it is among
      the new text and the candidates (a word all of them use says little), as a cosine of the two;
    - ``head``: 1 when the first subject word of either is one of the other's;
    - ``known``: the share of the new note's values the candidate already names (a related note
      saying the new state, not the old one);
    - ``changed``: 1 when each names a value the other does not (a number, a version, a name changed);
    - ``negation``: 1 when one of the two says "not", "no", "never"… and the other does not;
    - ``cue``: 1 when the new text speaks of a change (``UPDATE_CUE``);
    - ``kind``: the share of the kinds of value (number, version, name: ``_Reading.kinds``) either
      names that both name: "100 a minute" and "600 a minute" are two numbers."""
    if not similar:
        return []
    new = _read(text)
    new_words, new_values, new_first = new.words, new.values, new.first
    others = [_read(other) for _, other, _ in similar]
    frequency = Counter(new_words)
    for other in others:
        frequency.update(other.words)
    documents = 1 + len(others)
    # a word's weight depends only on how many of the texts use it: one of ``documents`` values
    rarity = [0.0, *(math.log(1.0 + documents / count) for count in range(1, documents + 1))]
    weight = {word: rarity[count] for word, count in frequency.items()}.__getitem__
    new_mass = sum(map(weight, new_words))
    cue = 1.0 if UPDATE_CUE.search(text, 0, READ_CHARS) else 0.0
    rows = []
    for (_, _, cosine), reading in zip(similar, others):
        words, values, first = reading.words, reading.values, reading.first
        mass = sum(map(weight, words))
        shared = sum(map(weight, new_words & words))
        overlap = shared / math.sqrt(new_mass * mass) if new_mass > 0 and mass > 0 else 0.0
        head = 1.0 if (new_first and new_first in words) or (first and first in new_words) else 0.0
        known = len(new_values & words) / len(new_values) if new_values else 0.0
        changed = 1.0 if (new_values - words) and (values - new_words) else 0.0
        negation = 1.0 if new.negated != reading.negated else 0.0
        both, either = new.kinds & reading.kinds, new.kinds | reading.kinds
        kind = len(both) / len(either) if either else 0.0
        rows.append([excess(cosine, spread), standing(cosine, spread), overlap, head, known, changed, negation, cue, kind])
    return rows


WEIGHTS = (3.65, 1.43, 4.08, 1.38, -2.51, -0.51, 0.49, 1.02, 1.24)
"""Per feature of ``FEATURES``, its weight in the chance that the new note replaces the
candidate. A logistic regression (L2 penalty 1 on the weights) over every candidate of every
add of the dev part of the knowledge-update set (29 projects, 582 adds, 2,620 candidates)
in the benchmark's order, with all-MiniLM-L6-v2 and multilingual-e5-small together: the
features are in each model's units, so one rule serves both. A candidate is right when it is
the new fact's old fact. Fitted by ``bench.replace_fit``, which prints these figures."""

INTERCEPT = -7.04
"""The logistic regression's intercept (``WEIGHTS``)."""

THRESHOLD = 0.34
"""The likeliest candidate is named at this chance or more: the threshold with the best
recall whose false alarms stay at or below 7 % (and wrong extra names at or below 30 %) for
both models when each dev project is left out of the fit in turn (``bench.replace_fit``)."""

SECOND_THRESHOLD = 0.17
"""The next likeliest is named too at this chance or more (half ``THRESHOLD``, chosen with
it): a related note that already names the new state often lies closer than the old one."""


def replacement_chances(text: str, similar: Sequence[Older], spread: Spread = NO_SPREAD) -> list[float]:
    """Per older note of ``similar`` (closest first): the chance that ``text`` replaces it,
    the logistic of ``INTERCEPT`` plus ``WEIGHTS`` times its ``pair_features``."""
    chances = []
    for row in pair_features(text, similar, spread):
        score = INTERCEPT + sum(w * x for w, x in zip(WEIGHTS, row))
        chances.append(1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, score)))))
    return chances


def likely_replaced(text: str, similar: Sequence[Older], spread: Spread = NO_SPREAD) -> list[str]:
    """The ids of the older notes of ``similar`` (id, text, cosine with ``text``'s vector;
    closest first) that ``text`` likely replaces: the likeliest when its chance is at least
    ``THRESHOLD``, and then the next likeliest when its chance is at least ``SECOND_THRESHOLD``.
    Notes of the very same text are no candidates."""
    similar = [s for s in similar if s[1] != text]
    chances = replacement_chances(text, similar, spread)
    order = sorted(range(len(chances)), key=lambda n: -chances[n])
    if not order or chances[order[0]] < THRESHOLD:
        return []
    return [similar[n][0] for n in order[:2] if n == order[0] or chances[n] >= SECOND_THRESHOLD]


def possibly_superseded(
    project: CanonicalProjectId, text: str, created_at: datetime, namespace: Namespace, vector: Vector, services: Services
) -> list[str]:
    """The id of the live note of ``project`` created before ``created_at`` that a new note
    of ``text`` likely replaces, if any: one semantic store search of ``vector``."""
    where = NoteFilter(project, now=services.clock.now())
    return _decided(text, created_at, services.reader.candidates(_question(where, namespace, vector)))


def superseded_each(notes: Sequence[Note], namespace: Namespace, vectors: Sequence[Vector], services: Services) -> list[list[str]]:
    """``possibly_superseded`` of each of ``notes`` (not yet stored) with its vector, the
    store asked once (``NoteReader.candidates_each``): the notes of a project share a filter."""
    now = services.clock.now()
    where = {project: NoteFilter(project, now=now) for project in {note.project_id for note in notes}}
    found = services.reader.candidates_each([_question(where[n.project_id], namespace, v) for n, v in zip(notes, vectors)])
    return [_decided(note.text, note.created_at, answer) for note, answer in zip(notes, found)]


def _question(where: NoteFilter, namespace: Namespace, vector: Vector) -> CandidateQuery:
    """The store search of a new note's suggestions: its ``DEPTH`` closest in ``where``, and the spread."""
    return CandidateQuery(where, DEPTH, namespace, vector, spread_sample=SPREAD_SAMPLE)


def _decided(text: str, created_at: datetime, found: Candidates) -> list[str]:
    """``likely_replaced`` over the candidates of ``found`` created before ``created_at``."""
    older = [(c.id, found.notes[c.id].note.text, c.score) for c in found.semantic if c.created_at < created_at]
    return likely_replaced(text, older, found.spread)
