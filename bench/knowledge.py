"""Knowledge that changes, through the server: does the newer fact win, and does add_note
name the note it replaces?

    .venv/bin/python -m bench.knowledge [--sets dev,heldout] [--models ...] [--store postgresql://…|embedded]

Reads ``bench/sets/knowledge_update/{dev,heldout}.json``: projects of several kinds, each with
old/new fact pairs (and a question the new fact answers), related notes that replace nothing
and unrelated notes. For each set and model a fresh ``mcp-memory serve`` (stdio) stores, per
project and one ``memory.add_note`` at a time: every old fact (createdAt in January), then the
related and unrelated notes (March), then every new fact (June); with ``--order session``, each
new fact right after its old fact, 30 seconds later; with ``--order sitting`` as by months, without
createdAt (``ORDERS``). Then each question is asked
(``memory.search``, topK 10) in semantic and in default (hybrid) mode.

Reported, per set: **newer wins** (the new fact ranks above the old one; an absent note ranks
below every present one, both absent is a loss), **new first** (the new fact is the first
result), **suggestion recall** (the new fact's ``possiblySupersedes`` names its old fact),
**false alarms** (share of related / unrelated notes whose ``possiblySupersedes`` is not
empty), **extra** (share of new facts whose ``possiblySupersedes`` names another note than
their old one) and add_note round-trip p50/p95. Writes ``bench/results/knowledge.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: python bench/knowledge.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import REPO, StdioClient, latency_ms, store_urls, table, use_model, write_result
from bench.datasets import data_digest
from bench.locomo import DEFAULT_MODEL, installed_models

SETS = REPO / "bench" / "sets" / "knowledge_update"
OLD_AT = datetime(2026, 1, 12, 9, 0, tzinfo=timezone.utc)
OTHER_AT = datetime(2026, 3, 16, 9, 0, tzinfo=timezone.utc)
NEW_AT = datetime(2026, 6, 15, 9, 0, tzinfo=timezone.utc)
MODES = ("semantic", "hybrid")
TOP_K = 10


def load_set(name: str) -> list[dict[str, Any]]:
    return json.loads((SETS / f"{name}.json").read_text())["projects"]


def _iso(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def _add(client: StdioClient, project: str, text: str, at: datetime | None, seconds: list[float]) -> dict[str, Any]:
    """``at`` None: no createdAt, the server's clock (one sitting)."""
    params = {"projectId": f"ku-{project}", "groupId": "notes", "text": text, **({} if at is None else {"createdAt": _iso(at)})}
    result, elapsed = client.timed("memory.add_note", params)
    seconds.append(elapsed)
    return result


def _rank(ids: list[str], note_id: str) -> int:
    return ids.index(note_id) if note_id in ids else len(ids) + 1


ORDERS = ("months", "session", "sitting")
"""How ``run_set`` stores a project: ``months``, every old fact (January), the related and
unrelated notes (March), every new fact (June); ``session``, the related and unrelated notes
(March), then each old fact with its new fact written 30 seconds after it, in the note
right after it (an agent correcting itself in one session, June); ``sitting``, as ``months``
but without createdAt: every note at the server's clock, one after the other."""


def run_set(client: StdioClient, projects: list[dict[str, Any]], order: str = "months") -> dict[str, Any]:
    seconds: list[float] = []
    suggested: list[bool] = []
    extra: list[bool] = []
    alarms: dict[str, list[bool]] = {"related": [], "unrelated": []}
    asked: list[tuple[str, str, str, str]] = []  # project, question, old id, new id
    for project in projects:
        name = project["name"]
        pairs = project["pairs"]
        dated = order != "sitting"
        if order != "session":
            old_ids = [_add(client, name, p["old"], OLD_AT + timedelta(minutes=i) if dated else None, seconds)["id"]
                       for i, p in enumerate(pairs)]
        others = [("related", t) for t in project["related"]] + [("unrelated", t) for t in project["unrelated"]]
        others.sort(key=lambda kind_text: kind_text[1])  # interleaved, in a fixed order
        for i, (kind, text) in enumerate(others):
            answer = _add(client, name, text, OTHER_AT + timedelta(minutes=i) if dated else None, seconds)
            alarms[kind].append(bool(answer.get("possiblySupersedes")))
        for i, pair in enumerate(pairs):
            if order != "session":
                old_id, at = old_ids[i], NEW_AT + timedelta(minutes=i) if dated else None
            else:
                old_id = _add(client, name, pair["old"], NEW_AT + timedelta(minutes=2 * i), seconds)["id"]
                at = NEW_AT + timedelta(minutes=2 * i, seconds=30)
            answer = _add(client, name, pair["new"], at, seconds)
            named = answer.get("possiblySupersedes") or []
            suggested.append(old_id in named)
            extra.append(any(n != old_id for n in named))
            asked.append((name, pair["question"], old_id, answer["id"]))
    modes: dict[str, Any] = {}
    for mode in MODES:
        wins, first = [], []
        for name, question, old_id, new_id in asked:
            params = {"projectId": f"ku-{name}", "query": question, "topK": TOP_K, "mode": mode}
            ids = [hit["id"] for hit in client.call("memory.search", params)["results"]]
            new_rank, old_rank = _rank(ids, new_id), _rank(ids, old_id)
            wins.append(new_rank < old_rank)
            first.append(new_rank == 0)
        modes[mode] = {"newer_wins": _share(wins), "new_first": _share(first)}
    return {
        "projects": [p["name"] for p in projects],
        "pairs": len(asked),
        "modes": modes,
        "suggestions": {
            "recall": _share(suggested),
            "extra": _share(extra),
            "false_alarms": _share(alarms["related"] + alarms["unrelated"]),
            "false_alarms_related": _share(alarms["related"]),
            "false_alarms_unrelated": _share(alarms["unrelated"]),
            "distractors": len(alarms["related"]) + len(alarms["unrelated"]),
        },
        "add_note_ms": latency_ms(seconds),
    }


def _share(values: list[bool]) -> float:
    return round(sum(values) / len(values), 3) if values else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.knowledge", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="dev,heldout")
    parser.add_argument("--models", default=DEFAULT_MODEL, help="comma-separated local models, or 'installed'")
    parser.add_argument("--out", default="knowledge", help="result name under bench/results/")
    parser.add_argument("--store", help="postgresql://… (an empty database) or 'embedded'; default: the local store")
    parser.add_argument("--order", choices=ORDERS, default="months", help="how each project is stored (ORDERS)")
    args = parser.parse_args(argv)
    names = args.sets.split(",")
    models = installed_models() if args.models == "installed" else args.models.split(",")
    runs = []
    with store_urls(args.store) as store_for:
        for model in models:
            run: dict[str, Any] = {"model": model, "sets": {}}
            for name in names:
                store = store_for()
                with StdioClient(**({"MCP_MEMORY_STORE": store} if store else {})) as client:
                    run["namespace"] = use_model(client, None if model == DEFAULT_MODEL else model)
                    client.call("memory.search", {"projectId": "warm-up", "query": "warm up"})  # loads the model
                    run["sets"][name] = run_set(client, load_set(name), args.order)
                print(f"  {model} {name}: {run['sets'][name]}", file=sys.stderr)
            runs.append(run)
    rows = []
    for run in runs:
        for name, res in run["sets"].items():
            s = res["suggestions"]
            rows.append([run["model"], name, res["pairs"],
                         *(f"{res['modes'][m]['newer_wins']:.3f} / {res['modes'][m]['new_first']:.3f}" for m in MODES),
                         s["recall"], s["false_alarms"], s["false_alarms_related"], s["false_alarms_unrelated"], s["extra"],
                         res["add_note_ms"]["p50"], res["add_note_ms"]["p95"]])
    print(f"Knowledge updates through `mcp-memory serve` (stdio, {'postgresql' if args.store else 'faiss'} store, "
          f"stored by {args.order}); newer wins / new first, topK 10\n")
    print(table(["model", "set", "pairs", "semantic", "hybrid (default)", "suggestion recall", "false alarms",
                 "related", "unrelated", "extra", "add_note p50 ms", "p95 ms"], rows))
    digest = {name: data_digest(SETS / f"{name}.json") for name in names}
    path = write_result(args.out, {"store": "postgresql" if args.store else "faiss", "order": args.order, "top_k": TOP_K, "runs": runs}, digest)
    print(f"\nwritten: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
