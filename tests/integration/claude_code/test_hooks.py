"""``mcp-memory hook <event>`` as Claude Code runs it: real processes, the real local model, the
real FAISS store and the background service over its Unix socket. Recall prints the relevant
note and nothing for an unrelated prompt; capture stores one digest per session with no secret
in it or in any log; twenty hooks at once leave one service; and every fault (bad input, a
missing transcript, an unusable data directory, a stale socket, a service killed mid-request,
a full disk, a service that never answers) prints nothing harmful, exits 0 in time and loses
no note."""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bench.claude_sessions import Session
from bench.hook_runs import MCP_MEMORY, add_notes, hook_env, services_of, stop_services
from bench.hook_runs import run_hook as hook
from tests.secrets_corpus import corpus_text, surviving

NOTES = [
    {"title": "Deploying", "text": "Production deploys run `fly deploy --app shop-prod` from main after CI is green; never deploy on Fridays."},
    {"title": "Password hashing", "text": "Passwords are hashed with argon2id (argon2-cffi), never bcrypt."},
    {"title": "Product search", "text": "Product search uses Meilisearch; the index is rebuilt nightly by the reindex_products job."},
]


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    yield home
    stop_services(home / "data")


def prompt(home: Path, text: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    payload = {"session_id": "s-1", "cwd": str(home / "project"), "hook_event_name": "UserPromptSubmit", "prompt": text}
    return hook(home, "user-prompt-submit", payload, env)


def stored(home: Path) -> list[dict]:
    out = subprocess.run([MCP_MEMORY, "export", "--data-dir", str(home / "data")], env=hook_env(home), capture_output=True, check=True)
    return [json.loads(line) for line in out.stdout.splitlines()[1:] if b'"text"' in line]


def secret_session(home: Path) -> Path:
    secrets = corpus_text()
    session = Session("s-1", str(home / "project")).prompt("Fix the login redirect, here is the env:\n" + secrets)
    session.edit(str(home / "project" / "src" / "login.py"))
    session.bash("pytest -q", "1 failed", exit_code=1).bash("cat .env", secrets)
    session.bash("git commit -am 'Fix the login redirect'", "[main 3f2a9c1] Fix the login redirect\n 1 file changed")
    session.answer("I fixed the login redirect. " + secrets)
    return session.save(home / "transcript.jsonl")


def capture(home: Path, event: str = "stop", **env: str) -> subprocess.CompletedProcess[bytes]:
    payload = {"session_id": "s-1", "cwd": str(home / "project"), "transcript_path": str(home / "transcript.jsonl")}
    return hook(home, event, payload, env)


def wait_for(condition: Callable[[], bool], seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


# ---------------------------------------------------------------- what the hooks do


def test_recall_prints_the_relevant_note_with_its_id_and_nothing_for_an_unrelated_prompt(home: Path) -> None:
    ids = add_notes(home, str(home / "project"), NOTES)
    related = prompt(home, "deploy this fix to production")
    assert related.returncode == 0
    assert f"[{ids[0]}] Deploying:" in related.stdout.decode()
    assert ids[1] not in related.stdout.decode()
    assert len(related.stdout.decode()) <= 2000
    unrelated = prompt(home, "write a haiku about autumn leaves")
    assert (unrelated.returncode, unrelated.stdout) == (0, b"")


def test_recall_keeps_to_the_characters_it_is_given(home: Path) -> None:
    add_notes(home, str(home / "project"), [{"text": f"Deploy step {i}: fly deploy " + "with care " * 80} for i in range(5)])
    shown = prompt(home, "how do we deploy with fly", MCP_MEMORY_RECALL_CHARS="400").stdout.decode()
    assert 0 < len(shown) <= 400


def test_capture_stores_one_digest_per_session_updated_in_place_with_no_secret_anywhere(home: Path) -> None:
    secret_session(home)
    first = capture(home, "stop")
    Session("s-1", "").prompt("and now the docs").save(home / "more.jsonl")
    with open(home / "transcript.jsonl", "a") as transcript:
        transcript.write((home / "more.jsonl").read_text())
    second = capture(home, "session-end")
    assert (first.returncode, first.stdout, second.returncode, second.stdout) == (0, b"", 0, b"")
    notes = stored(home)
    assert len(notes) == 1
    note = notes[0]
    assert note["groupId"] == "session" and note["source"] == "claude-code:session:s-1"
    assert "src/login.py" in note["text"] and "3f2a9c1 Fix the login redirect" in note["text"]
    assert "`pytest -q` → exit 1" in note["text"] and "and now the docs" in note["text"]
    assert note["expiresAt"] is not None and len(note["text"]) <= 4000
    logs = first.stderr + second.stderr + b"".join(p.read_bytes() for p in (home / "data").glob("*.log"))
    assert surviving(json.dumps(note)) == []
    assert surviving(logs.decode(errors="replace")) == []


def test_session_start_after_a_compaction_carries_the_digest_so_far(home: Path) -> None:
    secret_session(home)
    capture(home, "pre-compact")
    page = hook(home, "session-start", {"session_id": "s-1", "cwd": str(home / "project"), "source": "compact"})
    assert page.returncode == 0
    text = page.stdout.decode()
    assert text.startswith("# Project memory:") and "3f2a9c1" in text
    assert text.count("3f2a9c1 Fix the login redirect") == 1  # in the recent notes, or after them: once
    add_notes(home, str(home / "project"), [{"text": f"A newer digest {i}: " + "word " * 300, "group": "session"} for i in range(3)])
    text = hook(home, "session-start", {"session_id": "s-1", "cwd": str(home / "project"), "source": "compact"}).stdout.decode()
    assert "## This session so far" in text and text.count("3f2a9c1 Fix the login redirect") == 1
    startup = hook(home, "session-start", {"session_id": "s-2", "cwd": str(home / "project"), "source": "startup"})
    assert "## This session so far" not in startup.stdout.decode()


def test_session_start_shows_the_last_digests_and_no_other_note(home: Path) -> None:
    """Other notes arrive with the prompts they are relevant to: the start of a session carries
    the project's globals and its last few session digests only."""
    project = str(home / "project")
    add_notes(home, project, [{"text": "Passwords are hashed with argon2id, never bcrypt."}])
    add_notes(home, project, [{"text": f"Digest of session {i}: fixed flaky test number {i}.", "group": "session"} for i in range(5)])
    page = hook(home, "session-start", {"session_id": "s-9", "cwd": project, "source": "startup"}).stdout.decode()
    assert page.startswith("# Project memory:")
    assert "argon2id" not in page
    assert [i for i in range(5) if f"fixed flaky test number {i}." in page] == [2, 3, 4]


def test_a_digest_without_expiry_when_set_to_none(home: Path) -> None:
    secret_session(home)
    capture(home, MCP_MEMORY_SESSION_EXPIRY_DAYS="none")
    assert stored(home)[0]["expiresAt"] is None


def test_hooks_in_a_linked_worktree_share_the_main_worktree_memory(home: Path) -> None:
    main = home / "project"
    run = lambda *a, cwd=main: subprocess.run(["git", *a], cwd=cwd, check=True, capture_output=True)  # noqa: E731
    run("init", "-q", "-b", "main")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start")
    run("worktree", "add", "-q", str(home / "wt"), "-b", "feature")
    ids = add_notes(home, str(main.resolve()), NOTES)
    payload = {"session_id": "s", "cwd": str(home / "wt"), "prompt": "deploy this fix to production"}
    assert ids[0] in hook(home, "user-prompt-submit", payload).stdout.decode()


# ---------------------------------------------------------------- one service


def test_twenty_hooks_at_once_leave_exactly_one_service_on_a_private_socket(home: Path) -> None:
    add_notes(home, str(home / "project"), NOTES)
    results: list[subprocess.CompletedProcess[bytes]] = []
    threads = [threading.Thread(target=lambda: results.append(prompt(home, "deploy this fix to production"))) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.returncode for r in results] == [0] * 20
    assert sum(b"Deploying" in r.stdout for r in results) >= 15  # a few may have timed out on a busy machine
    assert len(services_of(home / "data")) == 1
    sock = home / "data" / "service.sock"
    assert stat.S_ISSOCK(sock.stat().st_mode) and stat.S_IMODE(sock.stat().st_mode) == 0o600
    (pid,) = services_of(home / "data")
    inodes = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    tcp = Path("/proc/net/tcp").read_text() + Path("/proc/net/tcp6").read_text()
    listening = {line.split()[9] for line in tcp.splitlines()[1:] if line.split()[3] == "0A"}
    assert not {f"socket:[{inode}]" for inode in listening} & inodes


def test_the_service_exits_when_idle_removing_its_socket(home: Path) -> None:
    add_notes(home, str(home / "project"), NOTES)
    assert b"Deploying" in prompt(home, "deploy this fix to production", MCP_MEMORY_SERVICE_IDLE="1").stdout
    assert wait_for(lambda: not services_of(home / "data"), 30)
    assert not (home / "data" / "service.sock").exists()


def test_a_data_directory_with_a_long_path_gets_a_short_socket_elsewhere(tmp_path: Path) -> None:
    home = tmp_path / ("h" * 100)
    (home / "project").mkdir(parents=True)
    # a runtime folder short whatever tmp_path is (pytest-xdist's are longer): else /tmp's is taken
    runtime = Path(tempfile.mkdtemp(prefix="run-", dir="/tmp"))
    try:
        add_notes(home, str(home / "project"), NOTES)
        assert b"Deploying" in prompt(home, "deploy this fix to production", XDG_RUNTIME_DIR=str(runtime)).stdout
        (sock,) = (runtime / "mcp-memory").glob("*.sock")
        assert stat.S_IMODE((runtime / "mcp-memory").stat().st_mode) == 0o700
        assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    finally:
        stop_services(home / "data")
        shutil.rmtree(runtime, ignore_errors=True)


def test_a_stale_socket_is_replaced_by_a_live_service(home: Path) -> None:
    add_notes(home, str(home / "project"), NOTES)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(home / "data" / "service.sock"))
    dead.close()  # the file stays, nobody listens: connect is refused
    assert b"Deploying" in prompt(home, "deploy this fix to production").stdout
    assert len(services_of(home / "data")) == 1


FAKE_SERVICE = """
import fcntl, os, socket, sys, time
sock, mode = sys.argv[1], sys.argv[2]
lock = os.open(sock + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(lock, fcntl.LOCK_EX)
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(sock)
listener.listen(8)
print("ready", flush=True)
connection, _ = listener.accept()
connection.recv(1 << 20)
if mode == "die":
    os.kill(os.getpid(), 9)
time.sleep(60)
"""


def fake_service(home: Path, mode: str) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([sys.executable, "-c", FAKE_SERVICE, str(home / "data" / "service.sock"), mode], stdout=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    return process


def test_a_service_killed_mid_request_leaves_the_hook_to_answer_in_process(home: Path) -> None:
    add_notes(home, str(home / "project"), NOTES)
    fake = fake_service(home, "die")
    answer = prompt(home, "deploy this fix to production")
    fake.wait(5)
    assert answer.returncode == 0 and b"Deploying" in answer.stdout
    assert b"hook_service_unavailable" in answer.stderr


def test_a_service_that_never_answers_costs_the_hook_its_budget_and_no_more(home: Path) -> None:
    add_notes(home, str(home / "project"), NOTES)
    fake = fake_service(home, "hang")
    try:
        started = time.monotonic()
        answer = prompt(home, "deploy this fix to production", MCP_MEMORY_HOOK_TIMEOUT="1.5")
        assert time.monotonic() - started < 6  # the budget is a promise: 1.5 s and the process's exit
        assert (answer.returncode, answer.stdout) == (0, b"")
    finally:
        fake.kill()
        fake.wait()


# ---------------------------------------------------------------- bad input and faults


@pytest.mark.parametrize(
    "stdin",
    [b"", b"{not json", b"[1, 2, 3]", b"\xff\xfe\x00", b"[" * 100_000 + b"]" * 100_000, b'{"prompt": "' + b"x" * 5_000_000 + b'"}'],
    ids=["empty", "malformed", "not-an-object", "not-utf8", "deeply-nested", "huge"],
)
def test_bad_input_prints_nothing_and_exits_0_saying_why(home: Path, stdin: bytes) -> None:
    for event in ("user-prompt-submit", "stop", "session-start"):
        result = hook(home, event, stdin, timeout=30)
        assert (result.returncode, result.stdout) == (0, b"")
        assert b"hook_input_refused" in result.stderr
    assert services_of(home / "data") == []  # nothing started for nothing


def test_a_prompt_that_is_no_string_prints_nothing_and_says_why(home: Path) -> None:
    add_notes(home, str(home / "project"), NOTES)
    log = home / "data" / "service.sock.log"
    for said, value in enumerate(({"text": "deploy"}, 5, None, ["deploy"]), start=1):
        result = hook(home, "user-prompt-submit", {"session_id": "s-1", "cwd": str(home / "project"), "prompt": value})
        assert (result.returncode, result.stdout) == (0, b"")
        assert (result.stderr + (log.read_bytes() if log.exists() else b"")).count(b"prompt is not a string") == said


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MCP_MEMORY_HOOK_TIMEOUT", "inf"),  # was an OverflowError: the hook failed and recalled nothing
        ("MCP_MEMORY_HOOK_TIMEOUT", "nan"),  # was said on stdout, where the prompt's context goes
        ("MCP_MEMORY_SERVICE_IDLE", "inf"),
        ("MCP_MEMORY_RECALL_CHARS", "99999999999999999999"),
        ("MCP_MEMORY_RECALL_FLOOR", "2"),  # a score is at most 1: nothing would ever be recalled
        ("MCP_MEMORY_SESSION_EXPIRY_DAYS", "1e9"),
    ],
)
def test_a_setting_out_of_range_is_ignored_and_said_on_stderr_only(home: Path, name: str, value: str) -> None:
    add_notes(home, str(home / "project"), NOTES)
    answer = prompt(home, "deploy this fix to production", **{name: value})
    assert answer.returncode == 0 and b"Deploying" in answer.stdout
    assert b"hook_setting_ignored" not in answer.stdout and b"hook_setting_ignored" in answer.stderr
    assert name.encode() in answer.stderr


def test_an_expiry_past_the_last_date_is_ignored_and_the_session_still_captured(home: Path) -> None:
    secret_session(home)
    done = capture(home, MCP_MEMORY_SESSION_EXPIRY_DAYS="1e9")  # 1e9 days overflowed the expiry: the capture failed
    assert (done.returncode, done.stdout) == (0, b"") and b"hook_setting_ignored" in done.stderr
    assert any("claude-code:session" in json.dumps(note) for note in stored(home))


def test_a_missing_or_truncated_transcript_loses_no_note(home: Path) -> None:
    secret_session(home)
    capture(home)
    before = stored(home)
    missing = hook(home, "stop", {"session_id": "s-1", "cwd": str(home / "project"), "transcript_path": str(home / "gone.jsonl")})
    assert (missing.returncode, missing.stdout) == (0, b"")
    assert b"transcript unreadable" in missing.stderr or b"transcript unreadable" in (home / "data" / "service.sock.log").read_bytes()
    (home / "transcript.jsonl").write_bytes((home / "transcript.jsonl").read_bytes()[:300])
    assert capture(home).returncode == 0
    assert stored(home) == before  # a cut transcript holds nothing yet: the digest stays


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_transcript_path_that_is_no_regular_file_is_refused_at_once_and_the_service_goes_on(home: Path, kind: str) -> None:
    # a FIFO held the service's reader until a writer came; /dev/zero kept it reading, a core busy, for good
    path = home / "fifo" if kind == "fifo" else Path("/dev/zero")
    if kind == "fifo":
        os.mkfifo(path)
    add_notes(home, str(home / "project"), NOTES)
    started = time.monotonic()
    result = hook(home, "stop", {"session_id": "s-1", "cwd": str(home / "project"), "transcript_path": str(path)},
                  {"MCP_MEMORY_HOOK_TIMEOUT": "6"})
    assert (result.returncode, result.stdout) == (0, b"")
    assert time.monotonic() - started < 5  # refused, not waited on until the budget ran out
    log = home / "data" / "service.sock.log"
    assert b"not a regular file" in result.stderr + (log.read_bytes() if log.exists() else b"")
    assert b"Deploying" in prompt(home, "deploy this fix to production").stdout  # the service still answers


def test_an_unusable_data_directory_prints_nothing_and_exits_0(home: Path) -> None:
    home.joinpath("data").write_text("a file where the data directory should be")
    for event in ("user-prompt-submit", "session-start"):
        result = hook(home, event, {"session_id": "s", "cwd": str(home), "prompt": "deploy"}, timeout=30)
        assert (result.returncode, result.stdout) == (0, b"")
        assert result.stderr


def test_a_full_disk_fails_the_capture_and_keeps_every_note(home: Path) -> None:
    ids = add_notes(home, str(home / "project"), NOTES)
    secret_session(home)

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))

    payload = json.dumps({"session_id": "s-1", "cwd": str(home / "project"), "transcript_path": str(home / "transcript.jsonl")})
    result = subprocess.run(
        [MCP_MEMORY, "hook", "stop", "--data-dir", str(home / "data")],
        input=payload.encode(),
        capture_output=True,
        env=hook_env(home, MCP_MEMORY_SERVICE_IDLE="0"),
        preexec_fn=small_files,
        timeout=60,
    )
    assert (result.returncode, result.stdout) == (0, b"")
    assert b"hook_failed" in result.stderr
    assert sorted(n["id"] for n in stored(home)) == sorted(ids)
    verify = subprocess.run([MCP_MEMORY, "verify", "--data-dir", str(home / "data")], env=hook_env(home), capture_output=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_service_that_cannot_start_sends_the_hook_in_process_at_once(home: Path) -> None:
    (home / "not-a-dir").write_text("x")
    (home / "config.json").write_text(json.dumps({"format": 1, "store": {"url": str(home / "not-a-dir")}}))
    result = prompt(home, "deploy this fix to production")
    assert (result.returncode, result.stdout) == (0, b"")
    assert b"the service stopped as it started" in result.stderr  # seen at once, not after the budget
    assert b"hook_timed_out" not in result.stderr
    assert services_of(home / "data") == []


def test_a_usage_error_is_reported_but_never_exit_2_which_would_block_the_prompt(home: Path) -> None:
    for argv in (["hook", "bogus-event"], ["hook", "stop", "--no-such-flag"]):
        result = subprocess.run([MCP_MEMORY, *argv], input=b"{}", capture_output=True, env=hook_env(home), timeout=30)
        assert (result.returncode, result.stdout) == (0, b"")
        assert b"error:" in result.stderr


def test_tool_calls_context_and_sync_in_a_linked_worktree_use_the_main_worktree(home: Path) -> None:
    from tests.integration.serve import StdioServer

    main = home / "project"
    run = lambda *a: subprocess.run(["git", *a], cwd=main, check=True, capture_output=True)  # noqa: E731
    run("init", "-q", "-b", "main")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start")
    run("worktree", "add", "-q", str(home / "wt"), "-b", "feature")
    (home / "wt" / "docs").mkdir()
    (home / "wt" / "docs" / "a.md").write_text("# Release\n\nReleases are cut on Tuesdays.\n")
    with StdioServer(home, cwd=home / "wt") as server:
        arguments = {"groupId": "kb", "text": "The worktrees of this repository share one memory."}
        server.result("tools/call", {"name": "memory_add_note", "arguments": arguments})
    env = hook_env(home)
    sync = subprocess.run([MCP_MEMORY, "sync", "docs"], cwd=home / "wt", env=env, capture_output=True, timeout=120)
    assert sync.returncode == 0, sync.stderr
    page = subprocess.run([MCP_MEMORY, "context"], cwd=home / "wt", env=env, capture_output=True, timeout=120).stdout.decode()
    assert page.startswith(f"# Project memory: {main.resolve()}\n")
    assert "share one memory" in page and "Releases are cut on Tuesdays" in page


def test_a_first_hook_on_a_fresh_machine_makes_the_data_directories_private(home: Path) -> None:
    fresh = home / "fresh"
    data = fresh / ".local-mcp-memory" / "data"
    payload = {"session_id": "s", "cwd": str(home / "project"), "source": "startup"}
    command = [MCP_MEMORY, "hook", "session-start", "--data-dir", str(data)]
    result = subprocess.run(command, input=json.dumps(payload).encode(), capture_output=True, env=hook_env(home), timeout=60)
    try:
        assert result.returncode == 0 and result.stdout.startswith(b"# Project memory:")
        for folder in (fresh, fresh / ".local-mcp-memory", data):
            assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    finally:
        stop_services(data)
