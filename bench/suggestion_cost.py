"""What the add-time suggestions (``possiblySupersedes``) cost an add_note, in-process.

    .venv/bin/python -m bench.suggestion_cost [--store postgresql://…|embedded] [--rounds 2]

Adds the notes of both knowledge-update halves (each made unique) to one project of a fresh
store, ``--rounds`` times over, and times each ``add_note`` as a whole; after each, times the
suggestion step alone (``suggestions.possibly_superseded``: one semantic store search and
the decision) for a note about to be added, and the decision alone (``likely_replaced``).
Then the same texts again through ``add_notes`` in batches of ``BATCH``, each batch timed as
a whole, and the suggestion step of a batch about to be added (``suggestions.superseded_each``:
the store asked once for every entry) timed. Writes ``bench/results/suggestion_cost.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python bench/suggestion_cost.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import latency_ms, store_urls, table, write_result
from bench.knowledge import SETS
from local_mcp_memory.application.add_note import AddNote, add_note, new_note
from local_mcp_memory.application.add_notes import AddNotes, add_notes
from local_mcp_memory.application.ports import CandidateQuery, Vector
from local_mcp_memory.application.ranking import SPREAD_SAMPLE
from local_mcp_memory.application.services import Services
from local_mcp_memory.application.suggestions import DEPTH, likely_replaced, possibly_superseded, superseded_each
from local_mcp_memory.domain.identifiers import GroupId, Namespace
from local_mcp_memory.domain.note import Note, NoteFilter
from local_mcp_memory.entrypoints.composition.compose import compose
from local_mcp_memory.entrypoints.composition.settings import ServerOptions


def texts() -> list[str]:
    out = []
    for part in ("dev", "heldout"):
        for project in json.loads((SETS / f"{part}.json").read_text())["projects"]:
            out += [p["old"] for p in project["pairs"]] + project["related"] + project["unrelated"] + [p["new"] for p in project["pairs"]]
    return out


BATCH = 50


def _decision_seconds(note: Note, namespace: Namespace, vector: Vector, services: Services) -> float:
    """The suggestion step's decision alone (``suggestions.likely_replaced`` over the
    candidates of the same store search, done first), for a note about to be added."""
    where = NoteFilter(note.project_id, now=services.clock.now())
    found = services.reader.candidates(CandidateQuery(where, DEPTH, namespace, vector, spread_sample=SPREAD_SAMPLE))
    older = [(c.id, found.notes[c.id].note.text, c.score) for c in found.semantic if c.created_at < note.created_at]
    started = time.perf_counter()
    likely_replaced(note.text, older, found.spread)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.suggestion_cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", help="postgresql://… (an empty database) or 'embedded'; default: the local store")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    whole, step, decision, batches, batch_steps = [], [], [], [], []
    with tempfile.TemporaryDirectory(prefix="mcp-memory-bench-") as home, store_urls(args.store) as store_for:
        services = compose(ServerOptions.resolve({}, Path(home) / "config.json", Path(home) / "data", store_for()))
        try:
            add_note(AddNote("bench", GroupId("g"), "warm up"), services)  # loads the model
            for i, text in enumerate(texts() * args.rounds):
                started = time.perf_counter()
                add_note(AddNote("bench", GroupId("g"), f"{text} ({i})"), services)
                whole.append(time.perf_counter() - started)
                note = new_note(AddNote("bench", GroupId("g"), f"{text} ({i}, next)"), services, services.clock.now())
                namespace, (vector,) = services.embedding.embed([note.text], "passage")
                started = time.perf_counter()
                possibly_superseded(note.project_id, note.text, note.created_at, namespace, vector, services)
                step.append(time.perf_counter() - started)
                decision.append(_decision_seconds(note, namespace, vector, services))
            every = [f"{text} (batch {i})" for i, text in enumerate(texts() * args.rounds)]
            for start in range(0, len(every) - BATCH + 1, BATCH):
                entries = tuple(AddNote("bench", GroupId("g"), text) for text in every[start : start + BATCH])
                started = time.perf_counter()
                add_notes(AddNotes(entries), services)
                batches.append(time.perf_counter() - started)
                upcoming = [new_note(AddNote("bench", GroupId("g"), f"{e.text}, next"), services, services.clock.now()) for e in entries]
                namespace, vectors = services.embedding.embed([n.text for n in upcoming], "passage")
                started = time.perf_counter()
                superseded_each(upcoming, namespace, vectors, services)
                batch_steps.append(time.perf_counter() - started)
        finally:
            services.store.close()
    result = {"store": "postgresql" if args.store else "faiss", "notes": len(whole),
              "add_note_ms": latency_ms(whole), "suggestion_ms": latency_ms(step),
              "decision_ms": latency_ms(decision),
              "batch": BATCH, "add_notes_batch_ms": latency_ms(batches), "batch_suggestions_ms": latency_ms(batch_steps)}
    print(f"add_note and its suggestion step, in-process, {result['store']} store, {len(whole)} adds to one project\n")
    print(table(["", "p50 ms", "p95 ms"], [["add_note (whole)", result["add_note_ms"]["p50"], result["add_note_ms"]["p95"]],
                                            ["suggestion step", result["suggestion_ms"]["p50"], result["suggestion_ms"]["p95"]],
                                            ["of which the decision", result["decision_ms"]["p50"], result["decision_ms"]["p95"]],
                                            [f"add_notes of {BATCH} (whole)", result["add_notes_batch_ms"]["p50"], result["add_notes_batch_ms"]["p95"]],
                                            [f"its suggestion step ({BATCH} entries)", result["batch_suggestions_ms"]["p50"], result["batch_suggestions_ms"]["p95"]]]))
    path = write_result(f"suggestion_cost{'_postgres' if args.store else ''}", result)
    print(f"\nwritten: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
