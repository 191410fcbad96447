"""The local model's thread settings: one short text's time, one longer text's and a batch's.

    .venv/bin/python -m bench.embedder_threads [--data PATH] [--texts 160] [--rounds 2] [--pause 3] [--out NAME]

Each variant runs in its own process, in turn, ``--rounds`` times: the server's session
(its rewrites and arena) built with one intra-op thread (the server's shared session: the
calling thread alone), or two with ``session.intra_op.allow_spinning`` 0 or 1 (with 1,
``session.force_spinning_stop`` too, so that no thread spins once a run returns: the
server's session of a passage alone, ``local.SOLO_THREADS``). Each embeds ``--texts`` texts
one at a time, ``--pause`` ms apart (a client's pause between requests, after which a
sleeping thread must be woken), half of them LoCoMo questions (13 tokens on average: a
search's query) and half turns (about 40: an add) of the first conversation, also reported
by length (below and from ``local.SOLO_TOKENS``), then 400 turns in requests of 100 as the server does (``LocalOnnxEmbedder.embed``: its
batches two side by side when there is more than one) and the same batches one after the
other. Reported: a query's and a turn's median wall time and mean CPU time (the process's,
every thread), a batched note's wall and CPU time, and the CPU the process uses in the
second after a run (an idle server must keep no core busy). A busy machine moves wall
times by more than these settings do; CPU time moves less. Writes
``bench/results/embedder_threads.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python bench/embedder_threads.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.client import table, write_result
from bench.datasets import LOCOMO_DIR, data_digest, load_locomo

VARIANTS = {"1 thread (the server's shared session)": ("0", 1), "2 threads": ("0", 2),
            "2 threads, spinning (the server's for a passage alone)": ("1", 2)}


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def measure(variant: str, data: Path, texts: int, pause: float) -> dict[str, float]:
    from local_mcp_memory.adapters.embedders import local

    spinning, threads = VARIANTS[variant]
    conversation = load_locomo(data)[0]
    turns = [n["text"] for n in conversation.notes]
    questions = [q.text for q in conversation.questions][: texts // 2]
    embedder = local.LocalOnnxEmbedder(threads=threads, workers=2, solo_threads=1)
    embedder._shared = embedder._load_locked(threads, spinning == "1")  # built as the server builds its sessions
    tokenizer, session = embedder._load()
    embedder.embed(turns[:50])  # warm
    out = {}
    by_length: dict[bool, list[float]] = {False: [], True: []}
    for kind, singles in (("query", questions), ("turn", turns[: texts - len(questions)])):
        wall, cpu = [], []
        for text in singles:
            time.sleep(pause / 1e3)
            started, used = time.perf_counter(), _cpu()
            embedder.embed([text])
            wall.append(time.perf_counter() - started)
            cpu.append(_cpu() - used)
            by_length[len(tokenizer.encode(text).ids) >= local.SOLO_TOKENS].append(wall[-1])
        out[f"one_{kind}_wall_p50_ms"], out[f"one_{kind}_cpu_ms"] = statistics.median(wall) * 1e3, statistics.mean(cpu) * 1e3
    out["one_short_wall_p50_ms"], out["one_long_wall_p50_ms"] = (statistics.median(by_length[k]) * 1e3 for k in (False, True))
    notes = turns[:400]
    started, used = time.perf_counter(), _cpu()
    for i in range(0, len(notes), 100):
        embedder.embed(notes[i : i + 100])
    out["batched_wall_ms"] = (time.perf_counter() - started) / len(notes) * 1e3
    out["batched_cpu_ms"] = (_cpu() - used) / len(notes) * 1e3
    started, used = time.perf_counter(), _cpu()
    for i in range(0, len(notes), 100):
        encodings = tokenizer.encode_batch(notes[i : i + 100])
        for rows in embedder._batches([len(e.ids) for e in encodings]):
            embedder._run(session, [encodings[j] for j in rows])
    out["batched_in_turn_wall_ms"] = (time.perf_counter() - started) / len(notes) * 1e3
    out["batched_in_turn_cpu_ms"] = (_cpu() - used) / len(notes) * 1e3
    embedder.embed(["what did we decide about the gateway timeout"])
    used = _cpu()
    time.sleep(1.0)
    out["idle_cpu_ms_per_s"] = (_cpu() - used) * 1e3
    return {k: round(v, 2) for k, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.embedder_threads", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=LOCOMO_DIR, help="LoCoMo conversation files")
    parser.add_argument("--texts", type=int, default=160)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--pause", type=float, default=3.0, help="ms between two texts embedded one at a time")
    parser.add_argument("--out", default="embedder_threads")
    parser.add_argument("--variant", help=argparse.SUPPRESS)  # internal: measure one variant in this process
    args = parser.parse_args(argv)
    if args.variant:
        print(json.dumps(measure(args.variant, args.data, args.texts, args.pause)))
        return 0
    load = [round(x, 2) for x in os.getloadavg()]
    runs: dict[str, list[dict[str, float]]] = {v: [] for v in VARIANTS}
    for _ in range(args.rounds):
        for variant in VARIANTS:
            done = subprocess.run([sys.executable, "-m", "bench.embedder_threads", "--variant", variant, "--data",
                                   str(args.data), "--texts", str(args.texts), "--pause", str(args.pause)],
                                  capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parent.parent)
            runs[variant].append(json.loads(done.stdout.splitlines()[-1]))
    medians = {v: {k: round(statistics.median(r[k] for r in rs), 2) for k in rs[0]} for v, rs in runs.items()}
    rows = [[v, m["one_query_wall_p50_ms"], m["one_query_cpu_ms"], m["one_turn_wall_p50_ms"], m["one_turn_cpu_ms"],
             m["one_short_wall_p50_ms"], m["one_long_wall_p50_ms"], m["batched_wall_ms"], m["batched_cpu_ms"],
             m["batched_in_turn_wall_ms"], m["batched_in_turn_cpu_ms"], m["idle_cpu_ms_per_s"]] for v, m in medians.items()]
    print(f"load average at start {load}, now {[round(x, 2) for x in os.getloadavg()]}; ms, medians of {args.rounds} rounds; "
          f"texts one at a time {args.pause} ms apart")
    print(table(["session", "one query wall p50", "one query CPU", "one turn wall p50", "one turn CPU",
                 "one text < 16 tokens wall p50", "≥ 16 tokens", "batched note wall", "batched note CPU",
                 "batches in turn: wall", "batches in turn: CPU", "idle CPU per s"], rows))
    path = write_result(args.out, {"load_average_at_start": load, "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
                                   "texts": args.texts, "rounds": args.rounds, "pause_ms": args.pause, "medians": medians,
                                   "runs": runs},
                        data_digest(args.data))
    print(f"written: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
