"""Benchmark of the note store: FaissNoteStore beside a numpy brute-force scan and chromadb.

    python -m bench.store_bench --sizes 10000,100000

Per size: N notes with random normalized 384-d vectors over 10 projects (``--projects``;
``--projects 1`` puts all N in the one project searched), 10 groups each.
Every system is measured in fresh processes on identical vectors: open time (constructor
plus the first search; the median of ``OPENS`` fresh processes, each run before any write),
search latency (top 10 in one project; and with a group filter),
add latency (one note, durable when the call returns, where the system offers that; wall
time, and the CPU time of the process, which leaves out waiting for the disk and so shows
whether the work of a write grows with the store) and resident memory. Prints a markdown
table and writes JSON under ``bench/results/``.
chromadb is optional (``pip install chromadb``): without it, its rows say so.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DIM = 384
PROJECTS = int(os.environ.get("STORE_BENCH_PROJECTS", "10"))  # --projects, passed on to the measuring processes
GROUPS = 10
QUERIES = 300
ADDS = 500
OPENS = 5
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
SYSTEMS = ("faiss", "numpy", "chromadb")


def vectors(n: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, DIM), dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def project_of(i: int) -> str:
    return f"/bench/project-{i % PROJECTS}"


def group_of(i: int) -> str:
    return f"g{(i // PROJECTS) % GROUPS}"


def note_id(i: int) -> str:
    return str(uuid.UUID(int=i + 1, version=4))


# -- preparing the data on disk --------------------------------------------------------


def prepare(size: int, workdir: Path) -> None:
    x = vectors(size, seed=7)
    np.save(workdir / "vectors.npy", x)
    _prepare_faiss(x, workdir / "faiss")
    try:
        _prepare_chroma(x, workdir / "chroma")
    except ImportError:
        pass


def _prepare_faiss(x: np.ndarray, directory: Path) -> None:
    """Writes the store as a compaction would leave it (one put per note, fsync'd, would
    only measure the disk N times)."""
    from adapters.faiss_store.disk import replace_atomically
    from adapters.faiss_store.journal import Journal
    from adapters.faiss_store.records import FORMAT, Manifest, NoteFields, Put, encode
    from adapters.faiss_store.snapshot import write_snapshot
    from adapters.faiss_store.state import StoreState

    directory.mkdir(parents=True)
    state = StoreState()
    namespace = f"local:bench-model:{DIM}"
    for i in range(x.shape[0]):
        fields = NoteFields(
            id=note_id(i),
            project=project_of(i),
            group=group_of(i),
            text=f"benchmark note {i} about topic {i % 97}",
            created=(T0 + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            tags=("bench",),
        )
        state.apply(Put(note=fields, namespace=namespace, vector=x[i].astype("<f4").tobytes()))
    snapshot = write_snapshot(directory, 1, state)
    Journal.create(directory / "journal-00000001.jsonl", 1).close()
    manifest = Manifest(format=FORMAT, generation=1, snapshot=snapshot, journal="journal-00000001.jsonl")
    replace_atomically(directory / "MANIFEST.json", encode(manifest))


def _prepare_chroma(x: np.ndarray, directory: Path) -> None:
    import chromadb

    client = chromadb.PersistentClient(path=str(directory))
    collection = client.create_collection("notes", metadata={"hnsw:space": "ip"})
    step = 5000
    for start in range(0, x.shape[0], step):
        rows = range(start, min(start + step, x.shape[0]))
        collection.add(
            ids=[note_id(i) for i in rows],
            embeddings=x[start : rows.stop],
            metadatas=[{"project": project_of(i), "group": group_of(i)} for i in rows],
            documents=[f"benchmark note {i}" for i in rows],
        )


# -- measuring one system in this process ----------------------------------------------


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentiles(seconds: list[float]) -> dict[str, float]:
    ms = np.asarray(seconds) * 1000
    return {"p50_ms": float(np.percentile(ms, 50)), "p99_ms": float(np.percentile(ms, 99))}


def measure(system: str, size: int, workdir: Path, open_only: bool = False) -> dict:
    queries = vectors(QUERIES, seed=11)
    new = vectors(ADDS, seed=13)
    project, group = project_of(0), group_of(0)
    if system == "faiss":
        search, search_group, add, opened = _faiss(workdir, project, group, queries[0])
    elif system == "numpy":
        search, search_group, add, opened = _numpy(workdir, project, group, queries[0])
    else:
        search, search_group, add, opened = _chroma(workdir, project, group, queries[0])
    result = {"system": system, "size": size, "open_s": opened}
    if open_only:
        return result
    result["search"] = percentiles([_timed(search, q) for q in queries])
    result["search_group"] = percentiles([_timed(search_group, q) for q in queries])
    result["add"] = result["add_cpu"] = None
    if add is not None:
        times = [_timed_both(add, (size + i, new[i])) for i in range(ADDS)]
        result["add"] = percentiles([wall for wall, _cpu in times])
        result["add_cpu"] = percentiles([cpu for _wall, cpu in times])
    result["rss_mib"] = rss_mib()
    return result


def _timed(call, arg) -> float:
    started = time.perf_counter()
    call(arg)
    return time.perf_counter() - started


def _timed_both(call, arg) -> tuple[float, float]:
    """Wall and process CPU seconds of one call."""
    started, cpu = time.perf_counter(), time.process_time()
    call(arg)
    return time.perf_counter() - started, time.process_time() - cpu


def _faiss(workdir: Path, project: str, group: str, first: np.ndarray):
    from adapters.faiss_store import FaissNoteStore
    from domain.identifiers import CanonicalProjectId, GroupId, Namespace, NoteId
    from domain.note import Note, NoteFilter, Tags

    namespace = Namespace("local", "bench-model", DIM)
    where = NoteFilter(CanonicalProjectId(project))
    where_group = NoteFilter(CanonicalProjectId(project), GroupId(group))
    started = time.perf_counter()
    store = FaissNoteStore(workdir / "faiss")
    store.search(namespace, first, where, 10)
    opened = time.perf_counter() - started

    def add(item: tuple[int, np.ndarray]) -> None:
        i, vector = item
        note = Note(
            NoteId(note_id(i)), CanonicalProjectId(project), GroupId(group), f"new note {i}",
            T0 + timedelta(seconds=i), tags=Tags(("bench",)),
        )
        store.put(note, namespace, vector)

    return (
        lambda q: store.search(namespace, q, where, 10),
        lambda q: store.search(namespace, q, where_group, 10),
        add,
        opened,
    )


def _numpy(workdir: Path, project: str, group: str, first: np.ndarray):
    started = time.perf_counter()
    x = np.load(workdir / "vectors.npy")
    n = x.shape[0]
    in_project = np.flatnonzero(np.arange(n) % PROJECTS == int(project.rsplit("-", 1)[1]))
    in_group = in_project[(in_project // PROJECTS) % GROUPS == int(group[1:])]

    def search(q: np.ndarray, rows: np.ndarray) -> np.ndarray:
        scores = (x @ q)[rows]
        top = np.argpartition(scores, -10)[-10:]
        return rows[top[np.argsort(-scores[top])]]

    search(first, in_project)
    opened = time.perf_counter() - started
    return (lambda q: search(q, in_project), lambda q: search(q, in_group), None, opened)


def _chroma(workdir: Path, project: str, group: str, first: np.ndarray):
    import chromadb

    started = time.perf_counter()
    client = chromadb.PersistentClient(path=str(workdir / "chroma"))
    collection = client.get_collection("notes")
    where = {"project": project}
    where_group = {"$and": [{"project": project}, {"group": group}]}
    collection.query(query_embeddings=[first.tolist()], n_results=10, where=where)
    opened = time.perf_counter() - started

    def add(item: tuple[int, np.ndarray]) -> None:
        i, vector = item
        collection.add(
            ids=[note_id(i)], embeddings=[vector.tolist()], metadatas=[{"project": project, "group": group}],
            documents=[f"new note {i}"],
        )

    return (
        lambda q: collection.query(query_embeddings=[q.tolist()], n_results=10, where=where),
        lambda q: collection.query(query_embeddings=[q.tolist()], n_results=10, where=where_group),
        add,
        opened,
    )


# -- driving the runs and reporting ----------------------------------------------------


def chroma_available() -> bool:
    try:
        import chromadb  # noqa: F401
    except ImportError:
        return False
    return True


def run(sizes: list[int], workroot: Path) -> list[dict]:
    results = []
    for size in sizes:
        workdir = workroot / f"n{size}"
        workdir.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        subprocess.run([sys.executable, __file__, "--prepare", str(size), "--workdir", str(workdir)], check=True)
        print(f"prepared {size} notes in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        for system in SYSTEMS:
            os.sync()  # flush the preparation's writes: fsync latency must not include them
            if system == "chromadb" and not chroma_available():
                results.append({"system": system, "size": size, "missing": "chromadb is not installed"})
                continue
            command = [sys.executable, __file__, "--measure", system, "--size", str(size), "--workdir", str(workdir)]
            opens = [_run(command + ["--open-only"])["open_s"] for _ in range(OPENS)]
            result = _run(command)
            result["open_runs"] = [result["open_s"], *opens]
            result["open_s"] = float(np.median(opens))
            results.append(result)
    return results


def _run(command: list[str]) -> dict:
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def table(results: list[dict]) -> str:
    def ms(value: dict | None, key: str) -> str:
        return "—" if value is None else f"{value[key]:.2f}"

    lines = [
        "| notes | system | open s | search p50 ms | search p99 ms | +group p50 ms | +group p99 ms "
        "| add p50 ms | add p99 ms | add CPU p50 ms | RSS MiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if "missing" in r:
            lines.append(f"| {r['size']} | {r['system']} | {r['missing']} ||||||||")
            continue
        lines.append(
            f"| {r['size']} | {r['system']} | {r['open_s']:.3f} | {ms(r['search'], 'p50_ms')} "
            f"| {ms(r['search'], 'p99_ms')} | {ms(r['search_group'], 'p50_ms')} "
            f"| {ms(r['search_group'], 'p99_ms')} | {ms(r['add'], 'p50_ms')} | {ms(r['add'], 'p99_ms')} "
            f"| {ms(r.get('add_cpu'), 'p50_ms')} | {r['rss_mib']:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    global PROJECTS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--projects", type=int, help="projects the notes are spread over (default 10)")
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--prepare", type=int)
    parser.add_argument("--measure", choices=SYSTEMS)
    parser.add_argument("--size", type=int)
    parser.add_argument("--open-only", action="store_true")
    args = parser.parse_args()
    if args.projects:
        PROJECTS = args.projects
        os.environ["STORE_BENCH_PROJECTS"] = str(args.projects)  # for the measuring processes
    if args.prepare:
        prepare(args.prepare, args.workdir)
        return
    if args.measure:
        import structlog

        structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
        print(json.dumps(measure(args.measure, args.size, args.workdir, args.open_only)))
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="store-bench-") as tmp:
        results = run([int(s) for s in args.sizes.split(",")], args.workdir or Path(tmp))
    report = table(results)
    print(report)
    out_dir = ROOT / "bench" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    meta = {"machine": platform.machine(), "python": platform.python_version(), "dim": DIM, "projects": PROJECTS}
    (out_dir / f"store_bench_{stamp}.json").write_text(json.dumps({"meta": meta, "results": results}, indent=2))


if __name__ == "__main__":
    main()
