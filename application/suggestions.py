"""Which older note a new note likely replaces: ``add_note``'s ``possiblySupersedes``.

No model but the embedder's: one store search with the new note's vector (it is embedded
anyway) for the closest notes of its project created before it, then a rule on the
closest one (``likely_replaced``): it is named when its similarity with the new note is at
least ``Rule.alone``, or at least ``Rule.cued`` when the new text speaks of a change ("now",
"moved to", "replaced", "raised", "no longer", ``UPDATE_CUE``). The similarity is measured
from the new note's mean cosine with the project's notes (``excess``), so one rule serves
every model. Only the closest: a new
note rarely replaces two, and every name is one more note for the agent to check. Exact
repeats of the text are never named (dedup on write catches those in one group). The agent
decides: the names are suggestions. Thresholds chosen on the dev half of the
knowledge-update set (docs/retrieval.md, ``bench.newer_study``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

import attrs

from local_mcp_memory.application.ports import NO_SPREAD, CandidateQuery, Spread, Vector
from local_mcp_memory.application.ranking import SPREAD_MIN_NOTES, SPREAD_SAMPLE
from local_mcp_memory.application.services import Services
from local_mcp_memory.domain.identifiers import CanonicalProjectId, Namespace
from local_mcp_memory.domain.note import NoteFilter


@attrs.frozen
class Rule:
    alone: float
    """At or above this ``excess`` the closest older note is named whatever the words."""
    cued: float
    """At or above this ``excess`` it is named when the new text speaks of a change."""


RULE = Rule(alone=0.4, cued=0.2)
"""MiniLM's rule of cosines 0.5 and 0.3, chosen on the dev half of the knowledge-update set,
said as ``excess`` (MiniLM's mean cosine there: 0.17); ``bench.newer_study`` prints the grid."""


def excess(cosine: float, spread: Spread) -> float:
    """How far ``cosine`` lies from the new note's mean cosine with the project's notes
    towards 1 (an identical text): ``(cosine - mean) / (1 - mean)``. Models differ in where
    unrelated texts lie (MiniLM near 0.1, multilingual-e5 near 0.8), not in this. A mean of
    one note is that note's own cosine: then the cosine itself."""
    if spread.count < 2 or spread.mean >= 1.0:
        return cosine
    return (cosine - spread.mean) / (1.0 - spread.mean)

STANDOUT = 2.0
"""... and only when its cosine stands at least this many standard deviations above the new
note's mean cosine with the project's notes (when there are at least ``SPREAD_MIN_NOTES``):
what the cosines mean differs by model (multilingual-e5-small's unrelated notes lie near 0.8),
and a note that does not stand out among the project's is not what the new one replaces.
The largest value that keeps the dev recall (``bench.newer_study``)."""

DEPTH = 5
"""How many of the project's notes closest to the new one the store search returns (the
closest older one among them is judged)."""

UPDATE_CUE = re.compile(
    r"\b(now|no longer|not any ?more|anymore|instead|replac\w*|switch\w*|moved|moves|migrat\w*|upgrad\w*|"
    r"downgrad\w*|bump\w*|raised|lowered|increased|decreased|reduced|dropped|changed|took over|rewr\w*|"
    r"ported|since|retired|deprecated|no more|went up|went down|extended|shortened|lengthened|"
    r"relicensed|slipped|cancelled|canceled|abandoned|nerfed|climbed|rebuilt|became|from now on)\b",
    re.IGNORECASE,
)
"""Words with which a note says that something changed."""


def likely_replaced(
    text: str, similar: Iterable[tuple[str, str, float]], rule: Rule = RULE, spread: Spread = NO_SPREAD
) -> list[str]:
    """The id of the first of ``similar`` (id, text, cosine with ``text``'s vector; closest
    first) if ``text`` likely replaces it under ``rule``, else nothing. ``spread``: of the
    new text's cosines with the project's notes, for ``STANDOUT``."""
    for note_id, other, cosine in similar:
        if other == text:
            continue
        if spread.count >= SPREAD_MIN_NOTES and spread.std > 0.0 and (cosine - spread.mean) / spread.std < STANDOUT:
            return []
        similarity = excess(cosine, spread)
        if similarity >= rule.alone or (similarity >= rule.cued and UPDATE_CUE.search(text)):
            return [note_id]
        return []
    return []


def possibly_superseded(
    project: CanonicalProjectId, text: str, created_at: datetime, namespace: Namespace, vector: Vector, services: Services
) -> list[str]:
    """The id of the live note of ``project`` created before ``created_at`` that a new note
    of ``text`` likely replaces, if any: one semantic store search of ``vector``."""
    where = NoteFilter(project, now=services.clock.now())
    found = services.reader.candidates(CandidateQuery(where, DEPTH, namespace, vector, spread_sample=SPREAD_SAMPLE))
    older = [(c.id, found.notes[c.id].note.text, c.score) for c in found.semantic if c.created_at < created_at]
    return likely_replaced(text, older, RULE, found.spread)
