"""Paraphrase-set recall through the server, per model, search mode and language.

    .venv/bin/python -m bench.paraphrase [PATH] [--models ...] [--modes semantic,keyword,hybrid]

PATH is the set's JSON (default: ``../shared/data/paraphrase/set.json``; the second set, in
other domains: ``bench/sets/paraphrase2/set.json``). A fresh ``mcp-memory serve`` per model
stores the set's notes in one project and answers every query (``memory.search``, topK 5);
recall@1 and @5 = share of queries whose target note is first / among the top 5, per target
language (en, ja, ko, es, as far as the set has them) and for the cross-language queries.
Writes ``bench/results/paraphrase.json``, with the sha256 of the set (``data_digest``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: python bench/paraphrase.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import StdioClient, latency_ms, table, use_model, write_result
from bench.datasets import PARAPHRASE_SET, ParaphraseSet, data_digest, load_paraphrase
from bench.locomo import DEFAULT_MODEL, installed_models

PROJECT = "paraphrase-set"


def run_model(model: str, data: ParaphraseSet, modes: list[str]) -> dict[str, Any]:
    with StdioClient() as client:
        namespace = use_model(client, None if model == DEFAULT_MODEL else model)
        ids = client.call(
            "memory.add_notes", {"notes": [{"projectId": PROJECT, "groupId": "notes", "text": t} for t in data.notes]}
        )["ids"]
        index = {note_id: i for i, note_id in enumerate(ids)}
        out: dict[str, Any] = {"model": model, "namespace": namespace, "modes": {}}
        for mode in modes:
            hits: dict[str, list[tuple[bool, bool]]] = {}
            seconds = []
            for query, target, language in data.queries:
                result, elapsed = client.timed("memory.search", {"projectId": PROJECT, "query": query, "topK": 5, "mode": mode})
                seconds.append(elapsed)
                found = [index[h["id"]] for h in result["results"]]
                hit = (found[:1] == [target], target in found)
                hits.setdefault(language, []).append(hit)
                if language != "cross":
                    hits.setdefault("all", []).append(hit)
            out["modes"][mode] = {
                "recall": {
                    lang: {"r@1": round(sum(a for a, _ in h) / len(h), 3), "r@5": round(sum(b for _, b in h) / len(h), 3), "n": len(h)}
                    for lang, h in hits.items()
                },
                "search_ms": latency_ms(seconds),
            }
        return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.paraphrase", description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=PARAPHRASE_SET)
    parser.add_argument("--models", default="installed", help="comma-separated local models, or 'installed'")
    parser.add_argument("--modes", default="semantic,keyword,hybrid")
    parser.add_argument("--out", default="paraphrase")
    args = parser.parse_args(argv)

    data = load_paraphrase(args.path)
    models = installed_models() if args.models == "installed" else args.models.split(",")
    runs = [run_model(m, data, args.modes.split(",")) for m in models]
    measured = runs[0]["modes"][next(iter(runs[0]["modes"]))]["recall"]
    languages = [l for l in ("all", "en", "ja", "ko", "es", "cross") if l in measured]
    rows = []
    for run in runs:
        for mode, res in run["modes"].items():
            r = res["recall"]
            rows.append([run["model"], mode, *(f"{r[l]['r@1']:.2f} / {r[l]['r@5']:.2f}" for l in languages)])
    counts = {l: measured[l]["n"] for l in languages}
    print(f"Paraphrase set through `mcp-memory serve` (stdio): {len(data.notes)} notes; recall@1 / recall@5\n")
    print(table(["model", "mode", *(f"{l} ({counts[l]})" for l in languages)], rows))
    path = write_result(args.out, {"data": str(args.path), "runs": runs}, data_digest(args.path))
    print(f"\nwritten: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
