"""docs/benchmarks.md, written from the result files under bench/results/.

    python -m bench.report [--results bench/results] [--out docs/benchmarks.md]

Only the latest measurement of each thing measured is shown: for every benchmark, the figures
of one configuration (store, size, model, mode, ...) come from the newest result file that
holds them. Older files stay in git history; the page never lists them. The page is a pure
function of the files, so a test checks that the committed page is what this command writes.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
PAGE = ROOT / "docs" / "benchmarks.md"

Result = dict[str, Any]


def load(results: Path) -> list[tuple[str, Result]]:
    """Every JSON result file, by name."""
    return [(path.name, json.loads(path.read_text(encoding="utf-8"))) for path in sorted(results.glob("*.json"))]


def when(name: str, data: Result) -> str:
    """The instant a result was measured, as sortable text: its ``when``, else the stamp in
    a ``store_bench_<stamp>.json`` name, else nothing."""
    if isinstance(data.get("when"), str):
        return data["when"]
    stem = name.removesuffix(".json")
    if stem.startswith("store_bench_"):
        stamp = stem.removeprefix("store_bench_")
        return f"{stamp[0:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}Z"
    return ""


def newest(rows: Iterable[tuple[tuple, str, str, Any]]) -> dict[tuple, tuple[str, Any]]:
    """``(key, when, file, row)`` -> for each key the row of the newest file (later file
    name on a tie, so the choice never depends on listing order)."""
    best: dict[tuple, tuple[str, str, Any]] = {}
    for key, instant, name, row in rows:
        if key not in best or (instant, name) > best[key][:2]:
            best[key] = (instant, name, row)
    return {key: (name, row) for key, (_, name, row) in best.items()}


def machine(data: Result) -> str:
    info = data.get("machine") or {}
    if isinstance(info, str):
        info = {"system": info}
    meta = data.get("meta") or {}
    cpu = info.get("cpu") or meta.get("cpu") or info.get("platform") or info.get("system") or "not recorded"
    cores = info.get("cores") or info.get("cpus") or data.get("cpus")
    load = data.get("load_average_at_start", data.get("load_average"))
    if load is None and isinstance(info.get("load_average"), list):
        load = info["load_average"][0]
    if isinstance(data.get("load_average_1m"), dict):
        load = data["load_average_1m"].get("before")
    parts = [str(cpu)]
    if cores and "cores" not in str(cpu):
        parts.append(f"{cores} cores")
    if isinstance(load, (int, float)):
        parts.append(f"load average {load:.1f}")
    return ", ".join(parts)


def num(value: Any, digits: int = 2) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def sources(files: dict[str, Result], names: Iterable[str]) -> list[str]:
    return [
        f"- `bench/results/{name}`: {when(name, files[name]) or 'time not recorded'}, {machine(files[name])}"
        for name in sorted(set(names))
    ]


def section(title: str, command: str, body: list[str], files: dict[str, Result], names: Iterable[str]) -> list[str]:
    return [f"## {title}", "", f"`{command}`", "", *body, "", "Measured:", "", *sources(files, names), ""]


def newest_runs(
    files: dict[str, Result], family: str, key: Callable[[Result, dict[str, Any]], tuple]
) -> dict[tuple, tuple[str, tuple[Result, dict[str, Any]]]]:
    """The runs of every file of a benchmark family (``benchmark`` starting with ``family``),
    the newest for each ``key(file, run)``."""
    return newest(
        (key(data, run), when(name, data), name, (data, run))
        for name, data in files.items()
        if str(data.get("benchmark", "")).startswith(family)
        for run in data.get("runs", [])
    )


def end_to_end(files: dict[str, Result]) -> list[str]:
    picked = newest_runs(files, "e2e", lambda data, run: (run_store(data), run["size"]))
    if not picked:
        return []
    rows = []
    for (store, size), (_, (_, run)) in sorted(picked.items()):
        search = run["search"]
        rows.append([
            store, f"{size:,}", num(run["bulk_ingest"]["notes_per_s"], 1),
            f"{num(run['add_note_ms']['p50'])} / {num(run['add_note_ms']['p95'])}",
            *(f"{num(search[mode]['p50'])} / {num(search[mode]['p95'])}" for mode in ("semantic", "keyword", "hybrid")),
        ])
    body = [
        "The whole server over stdio with the local model: `memory.add_notes` in batches of 500,",
        "then `memory.add_note` and `memory.search` one request at a time (milliseconds, p50 / p95).",
        "",
        *table(["store", "notes", "ingest notes/s", "add_note", "semantic", "keyword", "hybrid"], rows),
    ]
    return section("End to end", "python -m bench.e2e", body, files, (name for name, _ in picked.values()))


def run_store(data: Result) -> str:
    return str(data.get("store") or "faiss")


def locomo(files: dict[str, Result]) -> list[str]:
    """Each mode of each store and model from the newest run that measured it (a run may
    measure only some modes)."""
    picked = newest(
        ((run_store(data), run["model"], mode), when(name, data), name, (data, run, figures))
        for name, data in files.items()
        if str(data.get("benchmark", "")).startswith("locomo")
        for run in data.get("runs", [])
        for mode, figures in run["modes"].items()
    )
    if not picked:
        return []
    order = {"semantic": 0, "keyword": 1, "hybrid": 2}
    rows = []
    for (store, model, mode), (_, (_, run, figures)) in sorted(picked.items(), key=lambda i: (*i[0][:2], order.get(i[0][2], 3), i[0][2])):
        recall = figures["recall"]
        search = figures.get("search_ms") or {}
        rows.append([
            store, model, mode, *(num(recall.get(k), 3) for k in ("r@1", "r@5", "r@10", "r@25")),
            num(search.get("p50")), num(run["ingest"].get("notes_per_s"), 1),
        ])
    some = next(iter(picked.values()))[1][0]
    body = [
        f"Evidence recall on {some.get('notes', '?')} LoCoMo turns and {some.get('questions', '?')} questions"
        f" (conversations {', '.join(some.get('conversations', []))}), through the server's methods;",
        "search p50 in milliseconds, ingest (of that run) through `memory.add_notes`.",
        "",
        *table(["store", "model", "mode", "R@1", "R@5", "R@10", "R@25", "search p50", "ingest notes/s"], rows),
    ]
    return section("Retrieval quality: LoCoMo", "python -m bench.locomo --modes semantic,keyword,hybrid",
                   body, files, (name for name, _ in picked.values()))


def paraphrase_set(data: Result) -> str:
    """The set a paraphrase run measured, by its directory: paraphrase (the shared set), paraphrase2, …"""
    return Path(str(data.get("data", "paraphrase/set.json"))).parent.name


def paraphrase(files: dict[str, Result]) -> list[str]:
    picked = newest_runs(files, "paraphrase", lambda data, run: (paraphrase_set(data), run["model"]))
    if not picked:
        return []
    groups = ("all", "en", "ja", "ko", "es", "cross")
    rows = [
        [name, model, mode, *(num(figures["recall"].get(g, {}).get("r@1"), 2) for g in groups),
         num(figures["recall"]["all"].get("r@5"), 2)]
        for (name, model), (_, (_, run)) in sorted(picked.items())
        for mode, figures in run["modes"].items()
    ]
    body = [
        "Recall@1 of a paraphrased question per language (`cross`: question and note in different",
        "languages), and recall@5 over all of them, per set (`paraphrase`: `../shared/data/paraphrase`,",
        "the others under `bench/sets/`).",
        "",
        *table(["set", "model", "mode", *(f"R@1 {g}" for g in groups), "R@5 all"], rows),
    ]
    return section("Retrieval quality: paraphrases", "python -m bench.paraphrase [PATH] --modes semantic,keyword,hybrid",
                   body, files, (name for name, _ in picked.values()))


def knowledge(files: dict[str, Result]) -> list[str]:
    picked = newest(
        ((data.get("store", "faiss"), run["model"], data.get("order", "months"), part), when(name, data), name, figures)
        for name, data in files.items()
        if str(data.get("benchmark")).split("_")[0] == "knowledge"  # knowledge, knowledge_e5, knowledge_final, …
        and not name.endswith("_before.json")  # the code before a change, kept beside it for the comparison
        for run in data.get("runs", [])
        for part, figures in run["sets"].items()
    )
    if not picked:
        return []
    rows = []
    for (store, model, order, part), (_, figures) in sorted(picked.items()):
        modes, s = figures["modes"], figures["suggestions"]
        rows.append([store, model, order, part, num(figures["pairs"]), num(modes["semantic"]["newer_wins"], 3),
                     f"{num(modes['hybrid']['newer_wins'], 3)} / {num(modes['hybrid']['new_first'], 3)}",
                     num(s["recall"], 3), num(s["false_alarms"], 3), num(s["extra"], 3)])
    body = [
        "Old/new fact pairs (`bench/sets/knowledge_update`): the share of questions whose new fact ranks",
        "above the old one (newer wins) and first (new first), and what `add_note` suggests",
        "(`possiblySupersedes`): recall of the old fact, false alarms on related and unrelated notes, and",
        "new facts that name another note too (extra). Parts split by project: no parameter was chosen on",
        "the held-out part; the final part was measured once, after the rules were fixed. Stored by",
        "months: old facts, other notes, new facts months apart; by session: each new fact right after its",
        "old fact, 30 seconds later.",
        "",
        *table(["store", "model", "stored by", "set", "pairs", "semantic newer wins", "hybrid newer wins / new first",
                "suggestion recall", "false alarms", "extra"], rows),
    ]
    return section("Knowledge updates", "python -m bench.knowledge [--store embedded] [--models ...]", body, files,
                   (name for name, _ in picked.values()))


def suggestion_cost(data: Result) -> list[str]:
    rows = [["add_note (whole)", num(data["add_note_ms"]["p50"]), num(data["add_note_ms"]["p95"])],
            ["its suggestion step", num(data["suggestion_ms"]["p50"]), num(data["suggestion_ms"]["p95"])]]
    if "decision_ms" in data:
        rows.append(["of which the decision", num(data["decision_ms"]["p50"]), num(data["decision_ms"]["p95"])])
    if "add_notes_batch_ms" in data:
        rows += [[f"add_notes of {data['batch']} (whole)", num(data["add_notes_batch_ms"]["p50"]), num(data["add_notes_batch_ms"]["p95"])],
                 [f"its {data['batch']} suggestion steps", num(data["batch_suggestions_ms"]["p50"]), num(data["batch_suggestions_ms"]["p95"])]]
    return [f"{data['notes']} adds to one project, in-process, {data['store']} store.", "", *table(["", "p50 ms", "p95 ms"], rows)]


def store_bench(files: dict[str, Result]) -> list[str]:
    picked = newest(
        ((data["meta"].get("projects"), data["meta"].get("vectors") or "random", row["system"], row["size"]),
         when(name, data), name, row)
        for name, data in files.items()
        if name.startswith("store_bench_")
        for row in data.get("results", [])
        if "missing" not in row
    )
    if not picked:
        return []
    lines: list[str] = [
        "The store alone, no model and no protocol, on identical 384-d vectors: open (constructor",
        "and first search), top-10 search in the scope, with a group filter (a tenth of it), recall@10",
        "against the exact top 10, one durable add, resident memory. Milliseconds unless named.",
        "",
    ]
    for projects, vectors in sorted({key[:2] for key in picked}, key=lambda pv: (pv[0] != 1, pv[1] != "text", pv)):
        rows = []
        for key in sorted((k for k in picked if k[:2] == (projects, vectors)), key=lambda k: (k[3], k[2])):
            _, row = picked[key]
            rows.append([
                f"{key[3]:,}", key[2], num(row["open_s"] * 1000, 1),
                f"{num(row['search']['p50_ms'])} / {num(row['search']['p99_ms'])}", num(row.get("recall10"), 3),
                num(row["search_group"]["p50_ms"]),
                f"{num(row['add']['p50_ms'])} / {num(row['add']['p99_ms'])}" if row.get("add") else "—",
                num(row["rss_mib"], 0),
            ])
        scope = "every note in one project" if projects == 1 else f"notes spread over {projects} projects"
        lines += [
            f"{scope.capitalize()}, {vectors} vectors:", "",
            *table(["notes", "store", "open", "search p50 / p99", "recall@10", "group p50", "add p50 / p99", "RSS MiB"], rows),
            "",
        ]
    return section("Store", "python -m bench.store_bench --sizes 10000,100000 --projects 1",
                   lines[:-1], files, (name for name, _ in picked.values()))


def newest_file(
    title: str, command: str, match: Callable[[str, Result], bool], body: Callable[[Result], list[str]]
) -> Callable[[dict[str, Result]], list[str]]:
    """A section drawn from one file: the newest that ``match`` accepts."""

    def build(files: dict[str, Result]) -> list[str]:
        found = [(when(name, data), name) for name, data in files.items() if match(name, data)]
        if not found:
            return []
        _, name = max(found)
        return section(title, command, body(files[name]), files, [name])

    return build


def starting(family: str) -> Callable[[str, Result], bool]:
    return lambda name, data: str(data.get("benchmark", "")).startswith(family)


def named(benchmark: str) -> Callable[[str, Result], bool]:
    return lambda name, data: data.get("benchmark") == benchmark or name == f"{benchmark}.json"


def startup(data: Result) -> list[str]:
    rows = [[step, num(s["median_ms"], 1), num(s["min_ms"], 1), num(s["max_ms"], 1)] for step, s in data["summary"].items()]
    return [
        f"A fresh `mcp-memory serve` over stdio, {data.get('runs', '?')} runs: wall time (and CPU) from",
        "process start to each answer, milliseconds.",
        "",
        *table(["step", "median", "min", "max"], rows),
    ]


def http_load(data: Result) -> list[str]:
    rows = [[method, str(s["n"]), num(s["p50"], 1), num(s["p99"], 1), num(s["max"], 1)] for method, s in data["latency_ms"].items()]
    return [
        f"{data['clients']} clients, {data['requests_per_client']} requests each, {data['write_ratio']:.0%} writes, "
        f"{data['server_workers']} server workers: {num(data['requests_per_second'], 1)} requests/s, "
        f"{data['errors']} errors, {data['missing_after_restart']} of {data['acknowledged_notes']} acknowledged notes "
        "missing after a restart. Latency in milliseconds:",
        "",
        *table(["method", "requests", "p50", "p99", "max"], rows),
    ]


def embedders(data: Result) -> list[str]:
    rows = [
        [r["provider"], r["model"], num(r["load_s"]), num(r["single_texts_per_s"], 1), num(r["batch32_texts_per_s"], 1),
         num(r["peak_rss_mb"], 0)]
        for r in data["results"]
    ]
    return [
        "Each local model in its own process: load time (s), texts per second one at a time and",
        "in batches of 32, peak memory (MB).",
        "",
        *table(["provider", "model", "load s", "texts/s single", "texts/s batch 32", "peak RSS MB"], rows),
    ]


def lifecycle(data: Result) -> list[str]:
    rows = [[step, num(seconds, 1)] for step, seconds in data["seconds"].items()]
    return [
        f"{data['notes']:,} notes ({data['bytes']:,} bytes of export): export and import through the command",
        f"line; round trip identical: {'yes' if data.get('identical') else 'no'}.",
        "",
        *table(["step", "seconds"], rows),
    ]


def hooks(data: Result) -> list[str]:
    rows = [
        [event, *(f"{num(t[k]['p50'], 0)} / {num(t[k]['p95'], 0)}" for k in ("cold_ms", "warm_ms", "in_process_ms")),
         num(t["warm_hook_cpu_ms"]["p50"], 0)]
        for event, t in data["latency"].items()
    ]
    chars, capture = data["chars_added"], data["long_capture"]
    return [
        "Each Claude Code hook as Claude Code runs it (`mcp-memory hook <event>`), milliseconds p50 / p95:",
        "cold (no service running: the hook starts it and waits), warm (the service is up), in process",
        "(the hook does the work itself, the fallback);",
        "the hook process's own CPU when warm.",
        "",
        *table(["event", "cold", "warm", "in process", "warm hook CPU"], rows),
        "",
        f"Recall adds {num(chars['related']['mean'], 0)} characters on average to a related prompt"
        f" ({chars['related']['silent']} of {chars['related']['prompts']} get nothing) and"
        f" {num(chars['unrelated']['mean'], 0)} to an unrelated one ({chars['unrelated']['silent']} of"
        f" {chars['unrelated']['prompts']} silent). The service's memory: {num(data['service_memory_mib']['VmRSS'], 0)} MiB."
        f" Capturing a {capture['turns']:,}-turn transcript ({num(capture['transcript_mib'], 1)} MiB):"
        f" {num(capture['warm_ms']['p50'], 0)} ms warm.",
    ]


def team_scale(files: dict[str, Result]) -> list[str]:
    """The newest run of each data set, clients and mode, with the newest import of that data set."""
    runs = [(name, data) for name, data in files.items() if str(data.get("benchmark", "")).startswith("team_scale")]
    picked = newest(
        ((data.get("store", "postgresql"), data["notes"], data["projects"], data["clients"], str(data.get("server_workers", "—")), mode),
         when(name, data), name, s)
        for name, data in runs for mode, s in data["search"].items()
    )
    if not picked:
        return []
    imports = newest(
        ((data.get("store", "postgresql"), data["notes"], data["projects"]), when(name, data), name,
         data["import"]["notes_per_s"])
        for name, data in runs if data["import"].get("notes_per_s")
    )
    rows = []
    for (store, notes, projects, clients, workers, mode), (_, s) in sorted(picked.items()):
        imported = imports.get((store, notes, projects), (None, None))[1]
        rows.append([store, f"{notes:,}", str(projects), str(clients), workers, num(imported, 1), mode,
                     f"{num(s['p50'])} / {num(s['p95'])}", num(s.get("cpu_ms_per_search")), str(s["errors"])])
    body = [
        "PostgreSQL (or the local store) through `mcp-memory serve --transport http`: the notes imported with",
        "`mcp-memory import` (vectors included), then `memory.search` (topK 5) over POST /rpc; milliseconds, and",
        "the CPU time per search of the server and the database backends (wall time on a busy machine is mostly",
        "waiting).",
        "",
        *table(["store", "notes", "projects", "clients", "server workers", "import notes/s", "mode", "p50 / p95", "CPU / search",
                "errors"],
               rows),
    ]
    return section("Team store at scale", "python -m bench.team_scale", body, files,
                   {name for name, _ in (*picked.values(), *imports.values())})


def keyword_scale(files: dict[str, Result]) -> list[str]:
    found = sorted((when(name, data), name) for name, data in files.items()
                   if str(data.get("benchmark", "")).startswith("keyword_scale"))
    rows = [[name.removesuffix(".json"), f"{files[name]['notes']:,}", num(files[name]["import_notes_per_s"], 1), mode,
             f"{num(files[name][mode]['p50'])} / {num(files[name][mode]['p95'])}",
             num(files[name][mode].get("backend_cpu_ms_mean")), num(files[name][mode].get("process_cpu_ms_mean"))]
            for _, name in found for mode in ("keyword", "hybrid")]
    if not rows:
        return []
    body = [
        "The PostgreSQL store alone, one project whose every query term is held by ~10 % of the notes",
        "(milliseconds; CPU per question of the database backend and of the store's process).",
        "",
        *table(["run", "notes", "import notes/s", "mode", "wall p50 / p95", "backend CPU", "process CPU"], rows),
    ]
    return section("Keyword search at scale", "python -m bench.keyword_scale", body, files, (name for _, name in found))


def filtered_index(data: Result) -> list[str]:
    rows = [
        [f"{r['filter']}: {r['matching']:,} notes", r["system"], num(r["p50_ms"]), num(r["recall10"], 3), f"{r['short_share']:.0%}"]
        for r in data["results"]
    ]
    return [
        f"{data['size']:,} notes ({data['vectors']} vectors), {data['queries']} queries, top 10 under a filter, FAISS on one",
        f"thread: the FAISS store's own search against FAISS's `IndexIVFFlat` on the store's own {data['lists']:,}",
        f"centroids (calibrated `probes` {data['probes']}) searched with an `IDSelectorBatch` of the matching notes,",
        "and an exact `IndexFlatIP` with the same selector. Median milliseconds, recall@10 against the exact",
        "top 10 of the matching notes, and the share of answers short of 10 notes.",
        "",
        *table(["filter", "system", "p50 ms", "recall@10", "short answers"], rows),
    ]


def search_breakdown(data: Result) -> list[str]:
    rows = [[step.strip(), num(wall50), num(wall95), num(cpu), num(backend)] for step, wall50, wall95, cpu, backend in data["spans"]]
    return [
        f"Each step of a hybrid `memory.search` on the PostgreSQL store, project `{data['project']}`, "
        f"{data['searches']} questions, in one process with the real model;",
        "milliseconds: wall p50 / p95, this process's CPU p50, the database backend's CPU mean. Parts",
        "marked \"alone\" are the statement's parts run one by one.",
        "",
        *table(["step", "wall p50", "wall p95", "process CPU", "backend CPU"], rows),
    ]


def query_batches(data: Result) -> list[str]:
    rows = [[f"{threads}", batch, num(m["wall_ms_per_query"]), num(m["cpu_ms_per_query"]), num(m["tokens_per_query"], 1),
             f"{m['padding_share']:.0%}", f"{m['largest_difference_to_alone']:.1e}"]
            for threads, batches in data["medians"].items() for batch, m in batches.items()]
    return [
        "LoCoMo questions embedded by the local model in single calls of 1 to 16 texts (padded to the longest;",
        f"\"same length\": texts of one length only), {data['calls']} calls per size, medians of {data['rounds']} rounds:",
        "milliseconds per query, wall and CPU (the process's, every thread), tokens per query, the padding's",
        "share, and the largest difference between a text's vector in a call and alone.",
        "",
        *table(["intra-op threads", "texts per call", "wall", "CPU", "tokens", "padding", "largest difference"], rows),
    ]


def held_vectors(data: Result) -> list[str]:
    if "differing_answers" in data:  # two paths, before a large project's graph
        rows = [[path, num(p["wall_p50_ms"]), num(p["process_cpu_ms"]), num(p["backend_cpu_ms"])] for path, p in data["paths"].items()]
        return [
            f"The PostgreSQL store's hybrid question on project `{data['project']}`, {data['searches']} questions, with the",
            "project's vectors held in the server process and scored in the database, both asked each question:",
            f"{data['differing_answers']} answers differing, largest difference of a cosine or of the spread",
            f"{data['largest_score_difference']:.1e}; milliseconds: wall p50, this process's CPU, the backends' CPU (means).",
            "",
            *table(["path", "wall p50", "process CPU", "backend CPU"], rows),
        ]
    rows = [[path, str(p["differing_answers"]), f"{p['largest_score_difference']:.1e}", f"{p['recall_at_10']:.3f}", f"{p['recall_at_30']:.3f}",
             num(p["wall_p50_ms"]), num(p["process_cpu_ms"]), num(p["backend_cpu_ms"])] for path, p in data["paths"].items()]
    return [
        f"The PostgreSQL store's hybrid question on project `{data['project']}`, {data['searches']} questions, asked of",
        "each path: answers differing from the database's, the largest difference of a cosine or of the spread, the",
        "semantic candidates' recall against the exact scan; milliseconds: wall p50, this process's CPU, the backends' CPU.",
        "",
        *table(["path", "differing", "largest difference", "recall@10", "recall@30", "wall p50", "process CPU",
                "backend CPU"], rows),
    ]


def hnsw_settings(files: dict[str, Result]) -> list[str]:
    """Every run of ``bench.hnsw_settings``, oldest first: the builds (runs before the builds
    were timed have none), then each search setting against the exact scan."""
    found = sorted((when(name, data), name) for name, data in files.items() if starting("hnsw_settings")(name, data))
    if not found:
        return []
    builds, searches = [], []
    for _, name in found:
        data = files[name]
        graph = f"m {data['m']}, ef_c {data['ef_construction']}" if "m" in data else "m 16, ef_c 64"
        for b in data.get("builds", []):
            builds.append([f"`{name}`", b["index"], graph, str(data["workers"]), num(b["build_s"], 1),
                           num(b["cpu_us_per_vector"], 0), num(b["size_mib"], 0), num(data["load_average_at_start"], 1)])
        for r in data["rows"]:
            searches.append([f"`{name}`", r["index"], graph, str(r["ef_search"]), str(r.get("rerank") or "—"),
                             str(data["questions"]), num(r.get("recall_at_10"), 3), num(r["recall_at_30"], 3),
                             num(r["ms_p50"]), num(r["buffers_p50"], 0)])
    lines = [
        "pgvector HNSW indexes of one namespace (iterative scan, relaxed order) against an exact scan of",
        "the 100k-note project of `bench.team_scale`. Builds: wall seconds, the cluster's CPU per vector,",
        "index size, with the load average at the start. Searches: recall of the top 10 and top 30,",
        "statement milliseconds and shared buffers (medians); `bit` re-ranks its candidates by cosine.",
        "",
        *table(["file", "index", "graph", "workers", "build s", "CPU µs / vector", "MiB", "load"], builds),
        "",
        *table(["file", "index", "graph", "ef_search", "re-ranked", "questions", "recall@10", "recall@30", "p50 ms",
                "buffers"], searches),
    ]
    return section("HNSW settings", "python -m bench.hnsw_settings --store postgresql://… --variants vector,bit",
                   lines, files, [name for _, name in found])


SECTIONS = (
    end_to_end,
    store_bench,
    team_scale,
    keyword_scale,
    newest_file("Where a PostgreSQL search spends its time", "python -m bench.search_breakdown --store postgresql://…",
                starting("search_breakdown"), search_breakdown),
    newest_file("Vectors held in the server", "python -m bench.held_vectors --store postgresql://…",
                starting("held_vectors"), held_vectors),
    hnsw_settings,
    newest_file("Filtered search: own partition or IVF with a selector", "python -m bench.filtered_index --size 100000",
                named("filtered_index"), filtered_index),
    locomo,
    paraphrase,
    knowledge,
    newest_file("Suggestion cost", "python -m bench.suggestion_cost [--store embedded]", named("suggestion_cost"), suggestion_cost),
    newest_file("Start-up", "python -m bench.startup_bench", named("startup"), startup),
    newest_file("HTTP load", "python -m bench.http_load", named("http_load"), http_load),
    newest_file("Embedders", "python -m bench.embedder_bench", named("embedders"), embedders),
    newest_file("Queries in one model call", "python -m bench.query_batches", named("query_batches"), query_batches),
    newest_file("Export and import", "python -m bench.lifecycle_bench", named("lifecycle"), lifecycle),
    newest_file("Claude Code hooks", "python -m bench.hooks", named("hooks"), hooks),
)


def render(results: Path = RESULTS) -> str:
    files = dict(load(results))
    lines = [
        "# Benchmarks",
        "",
        "<!-- Written by `python -m bench.report` from bench/results/*.json: edit the script, not this page. -->",
        "",
        "The latest figures of each benchmark, one run each (medians and percentiles of that run), on",
        "the shared 2-core machines the project is developed on; each table names the file it comes",
        "from, when it was measured and the machine's load. Earlier figures are in git history. Every",
        "benchmark prints its table and writes its JSON under `bench/results/`; none of them is a",
        "timed test. The LoCoMo data: `python -m bench.fetch_data` (five development conversations",
        "in `bench/data/locomo/dev`, five held out in `bench/data/locomo/test`; CC BY-NC 4.0, cite",
        "Maharana et al., ACL 2024).",
        "",
    ]
    for build in SECTIONS:
        lines += build(files)
    shown = {line.split("`")[1].removeprefix("bench/results/") for line in lines if line.startswith("- `bench/results/")}
    others = sorted(set(files) - shown - superseded(files))
    if others:
        lines += [
            "## Other results",
            "",
            "Result files this page has no table for yet (add one to `bench/report.py`):",
            "",
            *sources(files, others),
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


def superseded(files: dict[str, Result]) -> set[str]:
    """Files a known section read but took no figure from: every figure in them was
    measured again later."""
    known = {name for name, data in files.items() if name.startswith("store_bench_")
             or str(data.get("benchmark", "")).startswith(("e2e", "locomo"))}
    return known


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.report", description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--out", type=Path, default=PAGE)
    args = parser.parse_args(argv)
    args.out.write_text(render(args.results), encoding="utf-8")
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
