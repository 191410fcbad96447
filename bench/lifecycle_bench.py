"""Round trip of a few thousand notes through the real command line and the real model.

    python -m bench.lifecycle_bench --notes 3000

1. Write an export file by hand (no namespace, no vectors) with N varied notes and two
   global settings: what a migration from another tool looks like.
2. ``mcp-memory import`` it into an empty home (local model: every note is embedded).
3. ``mcp-memory export --vectors`` that store.
4. ``mcp-memory import`` the export into a second empty home with the same config: vectors
   are reused, nothing is embedded.
5. ``mcp-memory export --vectors`` the second store and compare: every line after the
   header must be byte-identical; the first export's note fields must equal the file of 1.

Each step is timed as a whole process (start-up included). Prints a markdown table and
writes JSON under ``bench/results/``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MCP_MEMORY = str(Path(sys.executable).with_name("mcp-memory"))
T0 = datetime(2024, 1, 15, 10, 30, tzinfo=timezone.utc)
FIELDS = ("id", "projectId", "groupId", "title", "text", "tags", "source", "createdAt", "metadata")


def hand_written(path: Path, count: int) -> list[dict]:
    notes = []
    for i in range(count):
        created = T0 + timedelta(seconds=i, microseconds=(i % 3) * 1234)
        stamp = created.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if created.microsecond else "%Y-%m-%dT%H:%M:%SZ")
        notes.append(
            {
                "type": "note",
                "id": str(uuid.UUID(int=i + 1, version=4)),
                "projectId": f"/bench/project-{i % 5}",
                "groupId": ("global", "feature-1", "task-7")[i % 3],
                "title": None if i % 4 == 0 else f"Decision {i}",
                "text": f"Note {i}: webhooks are retried {i % 7} times with backoff; cache TTL {i % 11} minutes.",
                "tags": ["zeta", "alpha", f"t{i % 9}"][: i % 4],
                "source": None if i % 2 else "chat",
                "createdAt": stamp,
                "metadata": None if i % 5 == 0 else {"z": i, "a": [1.5, None, True], "conversationId": f"c-{i}"},
            }
        )
    header = {"format": "mcp-memory-export", "version": 1, "exportedAt": "2024-01-15T10:30:00Z"}
    globals_ = [
        {"type": "global", "projectId": "/bench/project-0", "key": "global.project.conventions", "value": "UTC.", "updatedAt": "2024-01-15T10:30:00Z"},
        {"type": "global", "projectId": "/bench/project-1", "key": "global.memory.groupDefaults", "value": {"featurePrefix": "feature-"}, "updatedAt": "2024-01-15T10:30:00Z"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in [header, *notes, *globals_]))
    return notes


def cli(home: Path, *args: str) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_MEMORY_")} | {"HOME": str(home)}
    started = time.perf_counter()
    done = subprocess.run(
        [MCP_MEMORY, *args, "--config", str(home / "config.json"), "--data-dir", str(home / "data")],
        capture_output=True,
        env=env,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"mcp-memory {' '.join(args)} failed ({done.returncode}):\n{done.stderr.decode()}")
    return elapsed, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=3000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="lifecycle-bench-"))
    try:
        source = work / "source.jsonl"
        notes = hand_written(source, args.notes)
        a, b = work / "a", work / "b"
        a.mkdir(), b.mkdir()
        t_import_embed, _ = cli(a, "import", str(source))
        t_export, _ = cli(a, "export", "--vectors", "--out", str(work / "a.jsonl"))
        shutil.copy(a / "config.json", b / "config.json")
        t_import_reuse, imported = cli(b, "import", str(work / "a.jsonl"))
        _, again = cli(b, "export", "--vectors")
        first = (work / "a.jsonl").read_bytes().splitlines()
        identical = again.stdout.splitlines()[1:] == first[1:]
        exported = [json.loads(line) for line in first[1 : 1 + args.notes]]
        fields_kept = [{k: n[k] for k in FIELDS} for n in exported] == [{k: n[k] for k in FIELDS} for n in notes]
        size = len(b"\n".join(first))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = {
        "import, embedding every note (local MiniLM)": t_import_embed,
        "export --vectors": t_export,
        "import, reusing the vectors": t_import_reuse,
    }
    print(f"\n{args.notes} notes, export {size / 1e6:.1f} MB with vectors\n")
    print("| step | seconds | notes/s |\n|---|---|---|")
    for step, seconds in rows.items():
        print(f"| {step} | {seconds:.2f} | {args.notes / seconds:.0f} |")
    print(f"\nsecond export byte-identical after the header: {identical}; fields as written by hand: {fields_kept}")
    print(imported.stderr.decode().strip().splitlines()[-1] + "\n")
    result = {
        "notes": args.notes,
        "bytes": size,
        "seconds": rows,
        "identical": identical,
        "fields_kept": fields_kept,
        "machine": platform.platform(),
        "when": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "data_digest": {"generated_by": Path(__file__).name, "sha256": hashlib.sha256(Path(__file__).read_bytes()).hexdigest()},  # the notes are this module's, seeded
    }
    out = ROOT / "bench" / "results" / "lifecycle.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    if not (identical and fields_kept):
        raise SystemExit("round trip changed the notes")


if __name__ == "__main__":
    main()
