"""How the recall floor of ``application.recall`` was chosen: by leaving a topic out.

    python -m bench.recall_floor [--data bench/recall_prompts.json] [--out bench/results/recall_floor.json]

A web shop's project notes (30, ten topics) are stored with the real local model; each prompt
of the set (31 related to a note, 30 unrelated: other code, general questions, chat) is
searched as the recall hook searches it. A floor is good on a set of prompts when related
prompts recall a note that answers them and unrelated ones recall nothing: the score is the
mean of those two rates (balanced accuracy). For each topic in turn, the floor is chosen on
the other topics' prompts (and two thirds of the unrelated prompts, a different third left out
each time), then measured on the left-out prompts. Two signals are compared: the hybrid
search score (what ``search`` answers) and the cosine similarity alone. The table shows the
held-out figures; the default floor is the median of the floors the folds chose.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "recall_prompts.json"
OUT = Path(__file__).parent / "results" / "recall_floor.json"
FLOORS = [round(0.02 * i, 2) for i in range(5, 46)]
PROJECT = "/shop"


def scored_prompts(data: dict[str, Any]) -> list[dict[str, Any]]:
    from local_mcp_memory.application.add_note import AddNote, add_note
    from local_mcp_memory.application.search import SearchNotes, search
    from local_mcp_memory.domain.identifiers import GroupId
    from local_mcp_memory.entrypoints.composition.compose import compose
    from local_mcp_memory.entrypoints.composition.settings import ServerOptions

    with tempfile.TemporaryDirectory() as home:
        services = compose(ServerOptions.resolve({}, Path(home) / "config.json", Path(home) / "data"))
        keys = {}
        for note in data["notes"]:
            added = add_note(AddNote(PROJECT, GroupId(note["topic"]), note["text"], title=note["title"]), services)
            keys[added.id.value] = note["key"]
        prompts = [{"prompt": p["prompt"], "relevant": p["notes"], "topic": _topic(p["notes"][0], data)} for p in data["related"]]
        prompts += [{"prompt": p, "relevant": [], "topic": None, "index": i} for i, p in enumerate(data["unrelated"])]
        for p in prompts:
            for mode in ("hybrid", "semantic"):
                found = search(SearchNotes(PROJECT, p["prompt"], top_k=5, mode=mode), services)
                p[mode] = [(keys[h.stored.note.id.value], h.score) for h in found.hits]
        services.store.close()
    return prompts


def _topic(key: str, data: dict[str, Any]) -> str:
    return next(n["topic"] for n in data["notes"] if n["key"] == key)


def outcome(prompts: list[dict[str, Any]], signal: str, floor: float) -> dict[str, float]:
    related = [p for p in prompts if p["relevant"]]
    unrelated = [p for p in prompts if not p["relevant"]]
    hit = sum(any(k in p["relevant"] and s >= floor for k, s in p[signal]) for p in related)
    silent = sum(all(s < floor for _, s in p[signal]) for p in unrelated)
    shown = [(k, p) for p in related for k, s in p[signal] if s >= floor]
    precise = sum(k in p["relevant"] for k, p in shown)
    return {
        "related_recalled": hit / len(related) if related else 1.0,
        "unrelated_silent": silent / len(unrelated) if unrelated else 1.0,
        "precision": precise / len(shown) if shown else 1.0,
        "balanced": ((hit / len(related) if related else 1.0) + (silent / len(unrelated) if unrelated else 1.0)) / 2,
    }


def best_floor(prompts: list[dict[str, Any]], signal: str) -> float:
    # ties: the middle of the best plateau, so a floor is not chosen at the edge of a cliff
    scores = [(outcome(prompts, signal, f)["balanced"], f) for f in FLOORS]
    top = max(s for s, _ in scores)
    plateau = [f for s, f in scores if s >= top - 1e-9]
    return plateau[len(plateau) // 2]


def leave_topic_out(prompts: list[dict[str, Any]], signal: str) -> dict[str, Any]:
    topics = sorted({p["topic"] for p in prompts if p["topic"]})
    folds, floors = [], []
    for i, topic in enumerate(topics):
        third = i % 3
        held = [p for p in prompts if p["topic"] == topic or (p["topic"] is None and p["index"] % 3 == third)]
        train = [p for p in prompts if p not in held]
        floor = best_floor(train, signal)
        floors.append(floor)
        folds.append({"topic": topic, "floor": floor, **outcome(held, signal, floor)})
    keys = ("related_recalled", "unrelated_silent", "precision", "balanced")
    mean = {k: round(statistics.fmean(f[k] for f in folds), 3) for k in keys}
    chosen = statistics.median(floors)
    return {"signal": signal, "held_out_mean": mean, "floors": floors, "chosen_floor": chosen, "all_prompts_at_chosen": outcome(prompts, signal, chosen), "folds": folds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    prompts = scored_prompts(json.loads(args.data.read_text()))
    results = [leave_topic_out(prompts, signal) for signal in ("hybrid", "semantic")]
    print("| signal | held-out related recalled | held-out unrelated silent | precision | balanced | floors chosen | floor |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        m = r["held_out_mean"]
        print(
            f"| {r['signal']} | {m['related_recalled']:.3f} | {m['unrelated_silent']:.3f} | {m['precision']:.3f} | "
            f"{m['balanced']:.3f} | {min(r['floors'])}–{max(r['floors'])} | {r['chosen_floor']} |"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"results": results, "prompts": prompts}, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
