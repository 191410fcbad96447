"""Filtered search: the FAISS store's own partitioned index against FAISS's IVF with an ID selector.

    python -m bench.filtered_index --size 100000

The notes and vectors are store_bench's (``--vectors text``: LoCoMo-like text embeddings, 10
projects of 10 groups), written as a compaction leaves them, so the store trains its
partition. FAISS's ``IndexIVFFlat`` is built over the same vectors with the store's own
centroids as its coarse quantizer (the same lists, no training of its own), so what differs
is only how each treats a filter:

* ``store``: ``FaissNoteStore.candidates`` (the filter from the note columns; the partition
  used only when the filter keeps at least half the space, else every matching vector scored);
* ``ivf+selector nprobe=p``: ``IndexIVFFlat.search`` with ``SearchParametersIVF(sel=
  IDSelectorBatch(matching ids), nprobe=p)``, for the store's calibrated ``probes`` and
  four times as many (at most every list);
* ``flat+selector``: ``IndexFlatIP`` with the same selector (exact, every vector tested).

Filters: one project (10 % of the notes), one group of it (1 %), and the project within a time
window holding 100 (0.1 %) and 10 of its notes (0.01 %). Per system and filter:
the median latency of a search for the top 10 (the selector built per query, as a store
answering a new filter would have to), recall@10 against the exact top 10 among the matching
notes, and the share of queries answered with fewer than 10 notes although thousands match.
One thread for FAISS throughout, as the store runs it. Prints a markdown table and writes
``bench/results/filtered_index.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import store_bench  # noqa: E402

K = 10
QUERIES = 200


def matching(size: int, keep) -> np.ndarray:
    """The note indexes ``keep`` accepts."""
    return np.asarray([i for i in range(size) if keep(i)], dtype=np.int64)


def exact_top(x: np.ndarray, rows: np.ndarray, q: np.ndarray) -> set[int]:
    return set(rows[np.argsort(-(x[rows] @ q), kind="stable")[:K]].tolist())


def measure(name: str, search, queries: np.ndarray, exact: list[set[int]]) -> dict:
    """Median latency, recall@10 and the share of short answers of ``search`` (query ->
    note indexes)."""
    seconds, recalls, short = [], [], 0
    for q, truth in zip(queries, exact):
        started = time.perf_counter()
        found = search(q)
        seconds.append(time.perf_counter() - started)
        recalls.append(len(truth & set(found)) / K)
        short += len(found) < K
    return {
        "system": name,
        "p50_ms": float(np.median(seconds) * 1000),
        "recall10": float(np.mean(recalls)),
        "short_share": short / len(queries),
    }


def run(size: int, workdir: Path, kind: str) -> tuple[list[dict], dict]:
    import faiss

    from local_mcp_memory.adapters.faiss_store import FaissNoteStore
    from local_mcp_memory.application.ports import CandidateQuery
    from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, Namespace
    from local_mcp_memory.domain.note import NoteFilter
    from local_mcp_memory.domain.time import TimeWindow

    faiss.omp_set_num_threads(1)
    if not (workdir / "vectors.npy").exists():  # a --workdir already prepared is reused
        store_bench.prepare(size, workdir, kind)
    x = np.load(workdir / "vectors.npy")
    queries = np.load(workdir / "queries.npy")[:QUERIES]
    snapshot = workdir / "faiss" / "snapshot-00000001"
    space = json.loads((snapshot / "sidecar.json").read_text())["spaces"][0]
    if not space.get("probes"):
        raise SystemExit(f"the store left its partition unused at {size} vectors ({kind}): nothing to compare")
    centroids = np.load(snapshot / space["centroids"])
    probes, lists = int(space["probes"]), centroids.shape[0]
    wide = min(lists, 4 * probes)

    quantizer = faiss.IndexFlatIP(x.shape[1])
    quantizer.add(centroids)
    ivf = faiss.IndexIVFFlat(quantizer, x.shape[1], lists, faiss.METRIC_INNER_PRODUCT)
    ivf.is_trained = True
    ivf.add(x)
    flat = faiss.IndexFlatIP(x.shape[1])
    flat.add(x)

    store = FaissNoteStore(workdir / "faiss")
    namespace = Namespace("local", "bench-model", store_bench.DIM)
    project, group = store_bench.project_of(0), store_bench.group_of(0)
    in_project = CanonicalProjectId(project)
    filters = {}
    for label, where, keep in (
        ("project", NoteFilter(in_project), lambda i: store_bench.project_of(i) == project),
        ("group", NoteFilter(in_project, GroupId(group)), lambda i: store_bench.project_of(i) == project and store_bench.group_of(i) == group),
        ("project, 1,000 s", NoteFilter(in_project, window=TimeWindow(store_bench.T0, store_bench.T0 + timedelta(seconds=1_000))),
         lambda i: store_bench.project_of(i) == project and i < 1_000),
        ("project, 100 s", NoteFilter(in_project, window=TimeWindow(store_bench.T0, store_bench.T0 + timedelta(seconds=100))),
         lambda i: store_bench.project_of(i) == project and i < 100),
    ):
        filters[label] = (where, matching(size, keep))
    rows = []
    try:
        for label, (where, ids) in filters.items():
            exact = [exact_top(x, ids, q) for q in queries]

            def own(q: np.ndarray, where: NoteFilter = where) -> list[int]:
                answer = store.candidates(CandidateQuery(where, K, namespace, q))
                return [store_bench.index_of(c.id) for c in answer.semantic]

            def selected(index, nprobe: int | None, ids: np.ndarray = ids):
                def search(q: np.ndarray) -> list[int]:
                    selector = faiss.IDSelectorBatch(ids)
                    if nprobe is None:
                        params = faiss.SearchParameters(sel=selector)
                    else:
                        params = faiss.SearchParametersIVF(sel=selector, nprobe=nprobe)
                    _, found = index.search(q.reshape(1, -1), K, params=params)
                    return [int(i) for i in found[0] if i >= 0]

                return search

            systems = [
                ("store", own),
                (f"ivf+selector nprobe={probes}", selected(ivf, probes)),
                (f"ivf+selector nprobe={wide}", selected(ivf, wide)),
                ("flat+selector", selected(flat, None)),
            ]
            for name, search in systems:
                search(queries[0])  # warm
                rows.append({"filter": label, "matching": int(ids.size), **measure(name, search, queries, exact)})
    finally:
        store.close()
    return rows, {"lists": lists, "probes": probes}


def table(rows: list[dict]) -> str:
    lines = ["| filter | system | p50 ms | recall@10 | answers short of 10 |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['filter']} ({r['matching']:,} notes) | {r['system']} | {r['p50_ms']:.2f} | {r['recall10']:.3f} | {r['short_share']:.0%} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--vectors", choices=("text", "random"), default="text")
    parser.add_argument("--workdir", type=Path, help="where the data is written (default: a temporary directory)")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="filtered-index-") as tmp:
        root = args.workdir or Path(tmp)
        workdir = root / f"n{args.size}"
        workdir.mkdir(parents=True, exist_ok=True)
        rows, partition = run(args.size, workdir, args.vectors)
    print(table(rows))
    out = ROOT / "bench" / "results" / "filtered_index.json"
    meta = {
        "benchmark": "filtered_index",
        "when": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": platform.machine(),
        "cpu": store_bench.cpu_model(),
        "load_average_at_start": load,
        "python": platform.python_version(),
        "size": args.size,
        "vectors": args.vectors,
        "queries": QUERIES,
        **partition,
    }
    out.write_text(json.dumps({**meta, "results": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
