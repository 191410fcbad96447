"""``mcp-memory sync`` as a user runs it: real processes, a real FAISS data directory, the
local embedder, and a stdio server reading the same data while the sync writes."""

from __future__ import annotations

import json
import select
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tests.integration.serve import MCP_MEMORY, StdioServer, server_env

PROJECT = "/work/kb-project"
FILLER = "The cache is warmed at start-up. " * 130  # ~4,300 characters: a file with it is split


def write(root: Path, path: str, text: str | bytes) -> Path:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(text if isinstance(text, bytes) else text.encode())
    return target


def sync(home: Path, folder: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    home.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [MCP_MEMORY, "sync", str(folder), *args],
        capture_output=True,
        text=True,
        env=server_env(home),
        cwd=cwd or home,
        timeout=300,
    )


def synced(home: Path, folder: Path, *args: str) -> str:
    done = sync(home, folder, "--project", PROJECT, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def sync_json(home: Path, folder: Path, *args: str) -> dict[str, Any]:
    return json.loads(synced(home, folder, "--json", *args))


def sources(server: StdioServer, group: str = "kb") -> list[str]:
    items = server.result("memory.list_recent", {"projectId": PROJECT, "groupId": group, "limit": 200})["items"]
    return sorted(item["source"] or "" for item in items)


def test_sync_adds_then_changes_only_what_changed_and_never_touches_a_hand_written_note(tmp_path: Path) -> None:
    home, folder = tmp_path / "home", tmp_path / "kb"
    write(folder, "a.md", "---\ntags: [ops, cache]\n---\n# Cache warm-up\nWarm the cache before traffic.\n")
    write(folder, "guide.md", f"# Guide\n\nRead me first.\n\n## Install\n\nRun the installer.\n{FILLER}\n\n## Rollback\n\nRevert the release tag.\n")
    write(folder, "sub/c.md", "# C\nthird file\n")
    with StdioServer(home) as server:
        hand = server.result(
            "memory.add_note", {"projectId": PROJECT, "groupId": "kb", "text": "Warm the cache before traffic.", "source": "a.md"}
        )["id"]

    assert synced(home, folder) == "added 3, updated 0, removed 0, unchanged 0, skipped 0\n"
    assert synced(home, folder) == "added 0, updated 0, removed 0, unchanged 3, skipped 0\n"
    write(folder, "a.md", "# Cache warm-up\nWarm the cache, then open the gates.\n")
    (folder / "sub" / "c.md").unlink()
    write(folder, "new.md", "# New\nfresh\n")
    assert synced(home, folder) == "added 1, updated 1, removed 1, unchanged 1, skipped 0\n"

    with StdioServer(home) as server:  # a restart: everything read back from disk
        assert sources(server) == ["a.md", "a.md", "guide.md", "guide.md#install", "guide.md#rollback", "new.md"]
        kept = server.result("memory.get", {"id": hand})
        assert (kept["text"], kept["source"]) == ("Warm the cache before traffic.", "a.md")
        items = server.result("memory.list_recent", {"projectId": PROJECT, "groupId": "kb", "limit": 200})["items"]
        a = next(i for i in items if i["source"] == "a.md" and i["id"] != hand)
        assert (a["title"], a["text"], a["tags"]) == ("Cache warm-up", "# Cache warm-up\nWarm the cache, then open the gates.", [])
        assert "origin" not in a
        hits = server.result("memory.search", {"projectId": PROJECT, "query": "how do I revert a release?", "topK": 3})["results"]
        assert hits[0]["source"] == "guide.md#rollback" and hits[0]["title"] == "Rollback"


def test_two_folders_never_collide_and_json_reports_each_file(tmp_path: Path) -> None:
    home, one, two = tmp_path / "home", tmp_path / "one", tmp_path / "two"
    write(one, "a.md", "from folder one")
    write(two, "a.md", "from folder two")
    first = sync_json(home, one)
    assert (first["added"], first["files"]["added"], first["root"], first["groupId"]) == (1, ["a.md"], str(one.resolve()), "kb")
    assert first["projectId"] == PROJECT and first["namespace"].startswith("local:")
    assert sync_json(home, two)["added"] == 1
    (one / "a.md").unlink()
    removed = sync_json(home, one)
    assert (removed["removed"], removed["files"]["removed"], removed["skippedFiles"]) == (1, ["a.md"], [])
    assert sync_json(home, two)["unchanged"] == 1
    with StdioServer(home) as server:
        items = server.result("memory.list_recent", {"projectId": PROJECT, "groupId": "kb"})["items"]
        assert [i["text"] for i in items] == ["from folder two"]


def test_problem_files_are_reported_and_skipped_and_odd_names_are_synced(tmp_path: Path) -> None:
    home, folder, outside = tmp_path / "home", tmp_path / "kb", tmp_path / "outside"
    names = ["with space.md", "naïve 日本.md", "new\nline.md"]
    for name in names:
        write(folder, name, f"# {name.replace(chr(10), ' ')}\nbody")
    write(folder, "latin1.md", "# Café".encode("latin-1"))
    write(folder, "bad-front.md", "---\ntags: [a\n---\nbody")
    write(outside, "secret.md", "secret")
    (folder / "leak.md").symlink_to(outside / "secret.md")
    done = sync(home, folder, "--project", PROJECT, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert sorted(report["files"]["added"]) == sorted(names)
    assert {s["path"]: s["reason"] for s in report["skippedFiles"]} == {
        "bad-front.md": "front matter is not valid YAML: did not find expected ',' or ']' (line 3)",
        "latin1.md": "not valid UTF-8 (byte 0xe9 at offset 5)",
        "leak.md": "symlink leads outside the folder",
    }
    assert report["skipped"] == 3
    assert "mcp-memory sync: skipped latin1.md: not valid UTF-8 (byte 0xe9 at offset 5)\n" in done.stderr
    with StdioServer(home) as server:
        assert sources(server) == sorted(names)
        assert "secret" not in json.dumps(server.result("memory.search", {"projectId": PROJECT, "query": "secret"}))


def test_the_project_defaults_to_the_working_directory_and_the_group_to_kb(tmp_path: Path) -> None:
    home, folder, work = tmp_path / "home", tmp_path / "kb", tmp_path / "work"
    work.mkdir()
    (tmp_path / "work-link").symlink_to(work)
    write(folder, "a.md", "alpha")
    done = sync(home, folder, "--json", "--group", "docs", cwd=tmp_path / "work-link")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["projectId"], report["groupId"]) == (str(work.resolve()), "docs")


def test_a_folder_that_is_not_one_and_a_bad_group_are_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    missing = sync(home, tmp_path / "missing")
    assert missing.returncode == 1 and "missing: not a directory" in missing.stderr
    (tmp_path / "kb").mkdir()
    bad = sync(home, tmp_path / "kb", "--group", "no spaces")
    assert bad.returncode == 2 and "argument --group: must match [A-Za-z0-9_-]+ (got 'no spaces')" in bad.stderr


def test_watch_syncs_an_edit_and_exits_0_on_sigint(tmp_path: Path) -> None:
    home, folder = tmp_path / "home", tmp_path / "kb"
    write(folder, "a.md", "# A\nfirst version")
    home.mkdir()
    process = subprocess.Popen(
        [MCP_MEMORY, "sync", str(folder), "--project", PROJECT, "--watch", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(home),
        cwd=home,
        text=True,
    )
    try:
        first = json.loads(_line(process, 120))
        assert first["added"] == 1
        time.sleep(2)  # the watch is in place once the first sync is printed and its catch-up done
        edited_at = time.monotonic()
        write(folder, "a.md", "# A\nsecond version")
        second = json.loads(_line(process, 60))
        took = time.monotonic() - edited_at
        assert (second["updated"], second["files"]["updated"]) == (1, ["a.md"])
        assert 0.9 < took < 30, took  # debounced: about a second of quiet first
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    with StdioServer(home) as server:
        items = server.result("memory.list_recent", {"projectId": PROJECT, "groupId": "kb"})["items"]
        assert [i["text"] for i in items] == ["# A\nsecond version"]


def test_a_live_server_reads_and_writes_while_a_sync_writes(tmp_path: Path) -> None:
    home, folder = tmp_path / "home", tmp_path / "kb"
    for i in range(150):
        write(folder, f"d{i % 5}/note-{i:03}.md", f"# Note {i}\nTopic {i} covers retries and back-off.\n")
    replies: list[dict[str, Any]] = []
    stop = threading.Event()
    with StdioServer(home) as server:
        server.result("memory.add_note", {"projectId": PROJECT, "groupId": "hand", "text": "written by hand"})

        def read_and_write_while_syncing() -> None:
            while not stop.is_set():
                replies.append(server.call("memory.list_recent", {"projectId": PROJECT, "groupId": "kb", "limit": 200}))
                replies.append(server.call("memory.search", {"projectId": PROJECT, "query": "retries", "topK": 5}))
                if sum(1 for r in replies if "id" in r.get("result", {})) < 150:
                    replies.append(server.call("memory.add_note", {"projectId": PROJECT, "groupId": "hand", "text": f"hand {len(replies)}"}))

        reader = threading.Thread(target=read_and_write_while_syncing)
        reader.start()
        try:
            done = sync(home, folder, "--project", PROJECT)
        finally:
            stop.set()
            reader.join(timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "added 150, updated 0, removed 0, unchanged 0, skipped 0\n"
        assert replies and all("result" in r for r in replies), [r for r in replies if "result" not in r][:1]
        seen = [len(r["result"]["items"]) for r in replies if "items" in r["result"]]
        assert seen == sorted(seen)  # batches appear whole, never undone
        assert len(sources(server)) == 150
        added = sum(1 for r in replies if "id" in r["result"])
        hand = server.result("memory.list_recent", {"projectId": PROJECT, "groupId": "hand", "limit": 200})["items"]
        assert added > 0 and len(hand) == 1 + added


def _line(process: subprocess.Popen[str], timeout: float) -> str:
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.5)
        if ready:
            line = process.stdout.readline()
            assert line, f"the process ended: {process.wait()} {process.stderr.read() if process.stderr else ''}"
            return line
    raise AssertionError(f"no line within {timeout} s")

