"""A text alone embedded back to back and between adds, with and without the sessions' arena
(``local.session_options``).

    .venv/bin/python -m bench.embed_in_add [--data PATH] [--notes 1200] [--rounds 2]

Each variant runs in its own process, in turn, ``--rounds`` times: the server's services
(``compose``, a fresh data directory, the local store and model, a core seen as spare so that
every passage of 16 tokens or more runs on the session of a text alone) and its dispatcher.
The first ``--notes`` LoCoMo turns are embedded one after another (back to back), then each
is embedded again right before its ``memory.add_note`` goes through the dispatcher, whose
embedding then reads the vector computed before (the add's other work between two texts:
the suggestions' store search, the write and its ``fdatasync``). Reported per text: the
median wall time of the embedder's call and the minor page faults it took (``getrusage``),
each way. "no arena" is each session built as before (``enable_cpu_mem_arena`` off). Prints
a table and writes ``bench/results/embed_in_add.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import REPO, table, write_result
from bench.datasets import LOCOMO_DIR, data_digest, load_locomo

VARIANTS = ("arena (the server's)", "no arena")


def child(variant: str, data: Path, notes: int) -> dict[str, Any]:
    """One variant's figures, in this process."""
    import resource
    import statistics
    import time

    from local_mcp_memory.adapters.embedders import local
    from local_mcp_memory.entrypoints.composition.compose import compose
    from local_mcp_memory.entrypoints.composition.settings import ServerOptions
    from local_mcp_memory.entrypoints.mcp import McpOptions
    from local_mcp_memory.entrypoints.server import build_dispatcher

    if variant == "no arena":
        built = local.session_options

        def without(onnxruntime: Any, threads: int, spinning: bool = False) -> Any:
            options = built(onnxruntime, threads, spinning)
            options.enable_cpu_mem_arena = False
            return options

        local.session_options = without
    local.spare_core = lambda cores, threads=local.SOLO_THREADS: True
    home = Path(tempfile.mkdtemp(prefix="embed-in-add-"))
    services = compose(ServerOptions(config_path=home / "config.json", data_dir=home / "data", environ=dict(os.environ)),
                       serving=True)
    dispatcher = build_dispatcher(lambda: services, McpOptions(project=None))
    turns = [n for c in load_locomo(data) for n in c.notes][:notes]
    embed = services.embedding.embed
    held: dict[str, Any] = {}
    services.embedding.embed = lambda texts, kind: held.pop(texts[0]) if texts[0] in held else embed(texts, kind)  # type: ignore[method-assign]

    def timed(text: str) -> tuple[Any, float, int]:
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        started = time.perf_counter()
        found = embed([text], "passage")
        return found, time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults

    dispatcher.handle(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "memory.search",
                                  "params": {"projectId": "warm-up", "query": "warm up"}}).encode())
    figures: dict[str, Any] = {}
    for way in ("back to back", "between adds"):
        times, faults = [], []
        for number, turn in enumerate(turns, start=1):
            found, took, faulted = timed(turn["text"])
            times.append(took)
            faults.append(faulted)
            if way == "between adds":
                held[turn["text"]] = found
                request = {"jsonrpc": "2.0", "id": number, "method": "memory.add_note", "params": turn}
                dispatcher.handle(json.dumps(request).encode())
        figures[way] = {"p50_ms": round(statistics.median(times) * 1e3, 3), "faults": round(statistics.mean(faults), 1)}
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.embed_in_add", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=LOCOMO_DIR)
    parser.add_argument("--notes", type=int, default=1200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.data, args.notes)))
        return 0
    runs: dict[str, list[dict[str, Any]]] = {variant: [] for variant in VARIANTS}
    for _ in range(args.rounds):
        for variant in VARIANTS:
            out = subprocess.run([sys.executable, "-m", "bench.embed_in_add", "--child", variant, "--data", str(args.data),
                                  "--notes", str(args.notes)], cwd=REPO, capture_output=True, text=True, check=True)
            runs[variant].append(json.loads(out.stdout.strip().splitlines()[-1]))
    rows = []
    for variant, found in runs.items():
        for way in ("back to back", "between adds"):
            rows.append([variant, way, " / ".join(f"{run[way]['p50_ms']:.3f}" for run in found),
                         " / ".join(f"{run[way]['faults']:.0f}" for run in found)])
    print(table(["sessions", "a text embedded", "p50 ms (each round)", "page faults a text"], rows))
    result = {"notes": args.notes, "rounds": args.rounds, "runs": runs}
    print(f"written: {write_result('embed_in_add', result, data_digest(args.data))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
