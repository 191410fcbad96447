"""Where an ``add_note`` and an ``add_notes`` go on the local store: the server under cProfile.

    .venv/bin/python -m bench.add_profile [--data PATH] [--notes 200]

``mcp-memory serve --transport stdio`` runs under ``cProfile`` with a fresh data directory and
reads a file of requests: one ``memory.search`` (loads the model), then the first ``--notes``
turns of the first LoCoMo conversation one ``memory.add_note`` at a time; a second server
stores the same turns in ``memory.add_notes`` of 100. Reported per note, for each
way in: the whole method, the model (the embedder's call without its tokenizer: a
request's batches run on the embedder's threads; loading it is left out), the tokenizer, ``fdatasync`` (the
journal made durable before the answer) with how many of them a note costs, the
``possiblySupersedes`` search, and the rest (protocol, validation, dedup, the store's own
work). cProfile slows pure-Python parts a little and the native ones not at all. Prints a
table and writes ``bench/results/add_profile.json``.
"""

from __future__ import annotations

import argparse
import json
import pstats
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.client import server_env, table, write_result
from bench.datasets import LOCOMO_DIR, data_digest, load_locomo

BATCH = 100
# (label, how the function appears in pstats: file suffix and function name)
METHODS = {"add_note": ("methods/add_note.py", "run"), "add_notes": ("methods/add_notes.py", "run")}
PARTS = {  # each part: the functions it sums
    # the model's call, waiting included: a request's batches run on the embedder's threads,
    # which cProfile does not follow (the tokenizer, called inside it, is taken off below)
    "model": [("adapters/embedders/local.py", "embed")],
    "tokenizer": [("~", "<method 'encode_batch' of 'tokenizers.Tokenizer' objects>"),
                  ("~", "<method 'encode' of 'tokenizers.Tokenizer' objects>")],
    "fdatasync": [("~", "<built-in method posix.fdatasync>")],
    "possiblySupersedes search": [("application/suggestions.py", "possibly_superseded"),  # add_note
                                  ("application/suggestions.py", "superseded_each")],  # add_notes
}
CUMULATIVE = {"model", "possiblySupersedes search"}  # parts timed with what they call


def requests(method: str, notes: list[dict[str, Any]]) -> str:
    lines = [("memory.search", {"projectId": "warm-up", "query": "warm up"})]
    if method == "add_note":
        lines += [("memory.add_note", note) for note in notes]
    else:
        lines += [("memory.add_notes", {"notes": notes[i : i + BATCH]}) for i in range(0, len(notes), BATCH)]
    return "".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": m, "params": p}) + "\n"
                   for i, (m, p) in enumerate(lines, start=1))


def _entry(stats: pstats.Stats, where: tuple[str, str]) -> tuple[int, float, float]:
    """(calls, own seconds, cumulative seconds) of the function ``where`` names."""
    suffix, name = where
    for (path, _, function), (_, calls, own, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        if function == name and path.endswith(suffix):
            return calls, own, cumulative
    return 0, 0.0, 0.0


def _summed(stats: pstats.Stats, wheres: list[tuple[str, str]]) -> tuple[int, float, float]:
    entries = [_entry(stats, where) for where in wheres]
    return sum(e[0] for e in entries), sum(e[1] for e in entries), sum(e[2] for e in entries)


def profile(method: str, notes: list[dict[str, Any]]) -> dict[str, Any]:
    """One server under cProfile storing ``notes`` through ``method``: its per-note parts.
    The warm-up search's share (one model run of two words, and opening the store) is
    counted in with the notes' and is well under a percent of them."""
    with tempfile.TemporaryDirectory(prefix="mcp-memory-profile-") as tmp:
        home = Path(tmp)
        (home / "requests.ndjson").write_text(requests(method, notes))
        command = [sys.executable, "-m", "cProfile", "-o", str(home / "serve.prof"),
                   "-m", "local_mcp_memory.entrypoints.cli", "serve", "--transport", "stdio"]
        with open(home / "requests.ndjson", "rb") as stdin, open(home / "replies.ndjson", "wb") as stdout:
            subprocess.run(command, stdin=stdin, stdout=stdout, stderr=subprocess.DEVNULL, env=server_env(home),
                           cwd=home, check=True)
        replies = [json.loads(line) for line in (home / "replies.ndjson").read_text().splitlines()]
        if errors := [r["error"] for r in replies if "error" in r]:
            raise RuntimeError(f"the server refused requests: {errors[:3]}")
        stats = pstats.Stats(str(home / "serve.prof"))
    parts = {label: _summed(stats, wheres) for label, wheres in PARTS.items()}
    seconds = {label: (cumulative if label in CUMULATIVE else own) for label, (_, own, cumulative) in parts.items()}
    # the model's load, in the warm-up search, is no add's
    seconds["model"] -= seconds["tokenizer"] + _entry(stats, ("adapters/embedders/local.py", "_load_locked"))[2]
    return _per_note({"notes": len(notes), "method_s": _entry(stats, METHODS[method])[2], "parts_s": seconds,
                      "fdatasync_calls": parts["fdatasync"][0]})


def _per_note(run: dict[str, Any]) -> dict[str, Any]:
    notes = run["notes"]
    parts_ms = {label: round(1000 * s / notes, 2) for label, s in run["parts_s"].items()}
    method_ms = round(1000 * run["method_s"] / notes, 2)
    parts_ms["the rest"] = round(method_ms - sum(parts_ms.values()), 2)
    return {"notes": notes, "per_note_ms": method_ms, "parts_ms": parts_ms,
            "fdatasync_per_note": round(run["fdatasync_calls"] / notes, 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.add_profile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=LOCOMO_DIR)
    parser.add_argument("--notes", type=int, default=200)
    args = parser.parse_args(argv)
    notes = load_locomo(args.data)[0].notes[: args.notes]
    result = {method: profile(method, notes) for method in METHODS}
    labels = [*PARTS, "the rest"]
    rows = []
    for method, run in result.items():
        shares = [f"{run['parts_ms'][label]} ms ({100 * run['parts_ms'][label] / run['per_note_ms']:.0f} %)"
                  for label in labels]
        rows.append([method, f"{run['per_note_ms']} ms", *shares, str(run["fdatasync_per_note"])])
    print(table(["method", "per note", *labels, "fdatasync calls per note"], rows))
    path = write_result("add_profile", {"notes": len(notes), "batch": BATCH, **result}, data_digest(args.data))
    print(f"\nwritten: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
