"""Two ``mcp-memory serve`` processes on one data directory (two Claude Code windows on
one machine) write 200 notes each into one project at the same time; afterwards each
process returns all 400, field for field, through memory.get and memory.list_recent. Once
more while a third process compacts the store over and over.

The servers run as they ship: stdio, the default local embedder, the FAISS store, one
``--data-dir`` and one ``--config`` file shared by both."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from tests.integration.serve import StdioServer

PER_WRITER = 200
WRITERS = ("a", "b")
T0 = datetime(2024, 3, 1, 10, 0, tzinfo=timezone.utc)
STORE_WORKER = str(Path(__file__).parents[1] / "store_worker.py")
NAMESPACE = "local:all-MiniLM-L6-v2:384"


def note_params(project: str, writer: str, index: int) -> dict[str, Any]:
    """Writer a's notes at even seconds, b's at odd ones: the two interleave in time order."""
    created = T0 + timedelta(seconds=2 * index + WRITERS.index(writer))
    return {
        "projectId": project,
        "groupId": f"writer-{writer}",
        "title": f"{writer}{index}",
        "text": f"Decision {index} recorded by window {writer}: keep retries idempotent.",
        "tags": ["first-half" if index < PER_WRITER // 2 else "second-half"],
        "createdAt": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "metadata": {"writer": writer, "index": index},
    }


class Server(StdioServer):
    """A shared-data-dir server whose stderr is drained as it comes: a store that follows
    many compactions logs enough to fill the pipe and stall a server nobody reads."""

    def __init__(self, home: Path, data_dir: Path, config: Path) -> None:
        super().__init__(home, "--data-dir", str(data_dir), "--config", str(config))
        self.logs = bytearray()
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()

    def _read_stderr(self) -> None:
        assert self.process.stderr
        for line in self.process.stderr:
            self.logs += line


def write_all(server: Server, project: str, writer: str, start: threading.Barrier) -> tuple[dict[str, Any], float, float]:
    """Add the writer's notes one request at a time; the expected note views by id, and
    when the first and the last write were answered."""
    start.wait(timeout=120)
    expected: dict[str, Any] = {}
    first = last = 0.0
    for index in range(PER_WRITER):
        params = note_params(project, writer, index)
        added = server.result("memory.add_note", params)
        last = time.monotonic()
        first = first or last
        assert added["namespace"] == NAMESPACE
        expected[added["id"]] = {**params, "id": added["id"], "source": None, "expiresAt": None, "importance": 0.5, "namespace": NAMESPACE}
    return expected, first, last


def ids_newest_first(notes: list[dict[str, Any]]) -> list[str]:
    return [n["id"] for n in sorted(notes, key=lambda n: n["createdAt"], reverse=True)]


def assert_sees_every_note(server: Server, project: str, expected: dict[str, Any]) -> None:
    for note_id, note in expected.items():
        assert server.result("memory.get", {"id": note_id}) == {**note, "supersededBy": []}
    notes = list(expected.values())

    def listed(**filters: Any) -> list[str]:
        recent = server.result("memory.list_recent", {"projectId": project, "limit": 200, **filters})
        return [item["id"] for item in recent["items"]]

    # two partitions of the 400 into halves of 200 (list_recent's maximum), each listed whole
    for writer in WRITERS:
        group = f"writer-{writer}"
        assert listed(groupId=group) == ids_newest_first([n for n in notes if n["groupId"] == group]), group
    for half in ("first-half", "second-half"):
        assert listed(tags=[half]) == ids_newest_first([n for n in notes if n["tags"] == [half]]), half
    assert listed() == ids_newest_first(notes)[:200]


@pytest.mark.parametrize("compacting", [False, True], ids=["alone", "while-another-process-compacts"])
def test_two_servers_on_one_data_dir_each_see_all_400_notes(tmp_path: Path, compacting: bool) -> None:
    data_dir, config = tmp_path / "shared-data", tmp_path / "shared-config.json"
    project_dir = tmp_path / "project"
    project_dir.mkdir()
    project = str(project_dir.resolve())
    servers = [Server(tmp_path / f"home-{w}", data_dir, config) for w in WRITERS]
    compactor: subprocess.Popen | None = None
    stop = tmp_path / "stop-compacting"
    try:
        for server in servers:  # open the store and load the model before the race starts
            assert server.result("memory.list_recent", {"projectId": project})["items"] == []
        if compacting:
            compactor = subprocess.Popen(
                [sys.executable, STORE_WORKER, "compact", str(data_dir), str(stop)],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        start = threading.Barrier(len(WRITERS))
        with ThreadPoolExecutor(len(WRITERS)) as pool:
            runs = [pool.submit(write_all, s, project, w, start) for s, w in zip(servers, WRITERS)]
            results = [run.result(timeout=600) for run in runs]
        if compactor is not None:
            stop.touch()
            compactions = int(compactor.communicate(timeout=60)[0])
            assert compactions >= 10, compactions

        (_, first_a, last_a), (_, first_b, last_b) = results
        assert first_a < last_b and first_b < last_a, "the two writers did not overlap in time"
        expected = {note_id: note for written, _, _ in results for note_id, note in written.items()}
        assert len(expected) == 2 * PER_WRITER
        for server in servers:
            assert_sees_every_note(server, project, expected)
    finally:
        stop.touch()
        if compactor is not None and compactor.poll() is None:
            compactor.kill()
            compactor.wait()
        codes = [server.close()[0] for server in servers if server.process.poll() is None]
    assert codes == [0, 0]
